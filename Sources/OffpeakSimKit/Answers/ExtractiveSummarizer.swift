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
        var sentences = Self.sentences(in: document, skippingHeadings: true)
        if sentences.isEmpty {
            sentences = Self.sentences(in: document, skippingHeadings: false)
        }
        guard let first = sentences.first else { return "The document is empty." }
        var summary = first
        for sentence in sentences.dropFirst() {
            let longer = summary + " " + sentence
            if SimTokens.count(longer) > budgetTokens { break }
            summary = longer
        }
        return summary
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
        for rawLine in text.split(whereSeparator: \.isNewline) {
            var line = Substring(rawLine).drop(while: \.isWhitespace)
            if line.first == "#" {
                if skippingHeadings { continue }
                line = line.drop(while: { $0 == "#" })
            }
            result += sentences(inLine: line)
        }
        return result
    }

    private static func sentences(inLine line: Substring) -> [String] {
        var result: [String] = []
        var start = line.startIndex
        var index = line.startIndex
        while index < line.endIndex {
            let next = line.index(after: index)
            if ".!?".contains(line[index]), next == line.endIndex || line[next].isWhitespace {
                result.append(normalized(line[start..<next]))
                start = next
            }
            index = next
        }
        result.append(normalized(line[start..<line.endIndex]))
        return result.filter { !$0.isEmpty }
    }

    private static func normalized(_ text: Substring) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
