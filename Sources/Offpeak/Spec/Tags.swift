/// Tags on work (a project, a customer, an agent: `JobSpec.tags`, `summarize --tag`), and the text a
/// ledger row keeps them in: sorted, each once, joined by commas ('' for none). A tag is letters,
/// digits and `._:/@-`, so a comma never is one, and the stored text splits back into its tags.
enum Tags {
    static func stored(_ tags: [String]) -> String {
        Set(tags).sorted().joined(separator: ",")
    }

    static func tags(_ stored: String) -> [String] {
        stored.split(separator: ",").map(String.init)
    }

    /// Why `tag` is not one; nil when it is.
    static func problem(_ tag: String) -> String? {
        if tag.isEmpty { return "a tag is empty" }
        if tag.count > 64 { return "tag \(tag.prefix(64))… is longer than 64 characters" }
        let allowed = tag.unicodeScalars.allSatisfy {
            $0.isASCII
                && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
                    || "._:/@-".unicodeScalars.contains($0))
        }
        return allowed ? nil : "tag \(tag) holds a character other than letters, digits and ._:/@-"
    }
}
