/// The sim's one token approximation: one token per four UTF-8 bytes, rounded up.
///
/// Real tokenizers differ by model; the sim bills with this rule on purpose, because offpeak's own
/// estimator (`TokenEstimator`) uses the identical rule, so a test can predict every usage number.
/// A request's input is the sum over the system text and every message's text blocks, each block
/// counted on its own, with no per-message overhead; its output is `count(answer)`.
public enum SimTokens {
    public static func count(_ text: String) -> Int { (text.utf8.count + 3) / 4 }

    /// The longest prefix of `text` that fits in `tokens` tokens (`tokens * 4` UTF-8 bytes), cut
    /// at a character boundary so the result is still valid text.
    public static func prefix(of text: String, tokens: Int) -> String {
        let budget = max(0, tokens) * 4
        guard text.utf8.count > budget else { return text }
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let width = text[index].utf8.count
            if used + width > budget { break }
            used += width
            end = text.index(after: index)
        }
        return String(text[..<end])
    }
}
