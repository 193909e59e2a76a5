/// Summarizes a document by keeping its first sentences, as a lead-N extractive summarizer does.
///
/// The sim must give real, checkable answers without a model: the same document always yields the
/// same summary, and the summary is made of the document's own words, so a test can tell a
/// summary of document A from one of document B.
public struct ExtractiveSummarizer: Sendable {
    /// About how many tokens the summary may use; at least one sentence is always kept.
    public var budgetTokens: Int

    public init(budgetTokens: Int = 60) {
        self.budgetTokens = budgetTokens
    }

    /// The document's first sentences, joined by single spaces, while they fit in `budgetTokens`.
    ///
    /// Markdown heading lines are left out (they are titles, not sentences) unless the document
    /// has nothing else; an empty document is said to be empty.
    public func summary(of document: String) -> String {
        var summary: String?
        // Stops at the first sentence that no longer fits, so a long document costs no more
        // than its opening.
        for skippingHeadings in [true, false] where summary == nil {
            Self.forEachSentence(in: document, skippingHeadings: skippingHeadings) { sentence in
                guard let current = summary else {
                    summary = sentence
                    return true
                }
                let longer = current + " " + sentence
                guard SimTokens.count(longer) <= budgetTokens else { return false }
                summary = longer
                return true
            }
        }
        return summary ?? "The document is empty."
    }

    /// The text between the first `<document>` and the `</document>` after it, if both are there.
    public static func document(in text: String) -> String? {
        guard let open = text.range(of: "<document>"),
            let close = text.range(of: "</document>", range: open.upperBound..<text.endIndex)
        else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }

    /// Splits text into sentences: at line breaks and after `.`, `!` or `?` followed by
    /// whitespace. Empty lines are skipped, whitespace inside a sentence is collapsed to single
    /// spaces, and markdown heading markers (`#`) are removed, or whole heading lines skipped.
    public static func sentences(in text: String, skippingHeadings: Bool) -> [String] {
        var result: [String] = []
        forEachSentence(in: text, skippingHeadings: skippingHeadings) { sentence in
            result.append(sentence)
            return true
        }
        return result
    }

    /// Calls `body` with each sentence in order until it returns false; reads the text only as
    /// far as needed, so the opening of a long document is cheap.
    static func forEachSentence(in text: String, skippingHeadings: Bool, _ body: (String) -> Bool) {
        var rest = text[...]
        while !rest.isEmpty {
            let lineEnd = rest.firstIndex(where: \.isNewline) ?? rest.endIndex
            var line = rest[..<lineEnd].drop(while: \.isWhitespace)
            rest = lineEnd == rest.endIndex ? rest[lineEnd...] : rest[rest.index(after: lineEnd)...]
            if line.first == "#" {
                if skippingHeadings { continue }
                line = line.drop(while: { $0 == "#" })
            }
            guard forEachSentence(inLine: line, body) else { return }
        }
    }

    /// - Returns: false when `body` asked to stop.
    private static func forEachSentence(inLine line: Substring, _ body: (String) -> Bool) -> Bool {
        var start = line.startIndex
        var index = line.startIndex
        while index < line.endIndex {
            let next = line.index(after: index)
            let ends = ".!?".contains(line[index]) && (next == line.endIndex || line[next].isWhitespace)
            if ends || next == line.endIndex {
                let sentence = normalized(line[start..<next])
                if !sentence.isEmpty, !body(sentence) { return false }
                start = next
            }
            index = next
        }
        return true
    }

    private static func normalized(_ text: Substring) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
