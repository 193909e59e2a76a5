/// The sim's answer to one request, already cut to the request's `max_tokens`.
public struct SimAnswer: Sendable, Equatable {
    public var text: String
    /// Billed output tokens: `SimTokens.count(text)`, or `max_tokens` when the answer was cut.
    public var outputTokens: Int
    /// The answer was longer than `max_tokens` and was cut (`max_tokens` / `length`).
    public var hitMaxTokens: Bool

    public init(text: String, outputTokens: Int, hitMaxTokens: Bool) {
        self.text = text
        self.outputTokens = outputTokens
        self.hitMaxTokens = hitMaxTokens
    }
}

/// Derives a deterministic answer from the last user message, so tests can predict it.
///
/// A message holding `<document>…</document>` gets an extractive summary of the document; any
/// other message gets `"Answer: "` and its first sentence (at most 40 tokens of it).
public struct AnswerComposer: Sendable {
    /// How many tokens of the prompt's first sentence a plain answer repeats, at most.
    public static let plainAnswerSentenceTokens = 40

    public var summarizer: ExtractiveSummarizer

    public init(summarizer: ExtractiveSummarizer = ExtractiveSummarizer()) {
        self.summarizer = summarizer
    }

    /// - Parameters:
    ///   - lastUserText: the text of the conversation's last user message.
    ///   - maxTokens: the request's output limit; a longer answer is cut to `maxTokens * 4` bytes.
    public func answer(to lastUserText: String, maxTokens: Int) -> SimAnswer {
        let full = fullAnswer(to: lastUserText)
        guard SimTokens.count(full) > maxTokens else {
            return SimAnswer(text: full, outputTokens: SimTokens.count(full), hitMaxTokens: false)
        }
        let cut = SimTokens.prefix(of: full, tokens: maxTokens)
        return SimAnswer(text: cut, outputTokens: maxTokens, hitMaxTokens: true)
    }

    /// The answer before any `max_tokens` cut.
    public func fullAnswer(to lastUserText: String) -> String {
        if let document = ExtractiveSummarizer.document(in: lastUserText) {
            return summarizer.summary(of: document)
        }
        var firstSentence: String?
        ExtractiveSummarizer.forEachSentence(in: lastUserText, skippingHeadings: false) { sentence in
            firstSentence = sentence
            return false
        }
        guard let first = firstSentence else { return "Answer: (empty prompt)" }
        let trimmed = SimTokens.prefix(of: first, tokens: Self.plainAnswerSentenceTokens)
        return "Answer: " + trimmed.trimmingTrailingWhitespace()
    }
}

extension String {
    fileprivate func trimmingTrailingWhitespace() -> String {
        var copy = self
        while copy.last?.isWhitespace == true { copy.removeLast() }
        return copy
    }
}
