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
/// other message gets `"Answer: "` and its first sentence (at most `answerTokens` tokens of it).
/// A message holding `<item id="...">` blocks (offpeak's batched prompt) gets one JSON object
/// with each item's answer, exactly the answer that item would get if sent alone, so a batched
/// run and a one-request-per-item run can be compared answer by answer.
public struct AnswerComposer: Sendable {
    /// How many tokens of the prompt's first sentence a plain answer repeats, by default.
    public static let defaultAnswerTokens = 40

    public var summarizer: ExtractiveSummarizer
    /// How many tokens of the prompt's first sentence a plain answer repeats, at most.
    public var answerTokens: Int

    public init(
        summarizer: ExtractiveSummarizer = ExtractiveSummarizer(), answerTokens: Int = defaultAnswerTokens
    ) {
        self.summarizer = summarizer
        self.answerTokens = answerTokens
    }

    /// - Parameters:
    ///   - lastUserText: the text of the conversation's last user message.
    ///   - maxTokens: the request's output limit; a longer answer is cut to `maxTokens * 4` bytes.
    public func answer(to lastUserText: String, maxTokens: Int) -> SimAnswer {
        cut(fullAnswer(to: lastUserText), maxTokens: maxTokens)
    }

    /// `full` as sent under `maxTokens`: whole, or cut to `maxTokens * 4` bytes and billed as
    /// `maxTokens`.
    public func cut(_ full: String, maxTokens: Int) -> SimAnswer {
        guard SimTokens.count(full) > maxTokens else {
            return SimAnswer(text: full, outputTokens: SimTokens.count(full), hitMaxTokens: false)
        }
        let cut = SimTokens.prefix(of: full, tokens: maxTokens)
        return SimAnswer(text: cut, outputTokens: maxTokens, hitMaxTokens: true)
    }

    /// The answer before any `max_tokens` cut (and without damage): the batched JSON object when
    /// the text holds items, else the single answer.
    public func fullAnswer(to lastUserText: String) -> String {
        let items = BatchItem.items(in: lastUserText)
        return items.isEmpty ? singleAnswer(to: lastUserText) : batchAnswer(for: items).text
    }

    /// Each item answered on its own. An item's text never holds a whole item block (its text
    /// ends at the first `</item>`), so the single answer is what the item would get alone.
    public func batchAnswer(for items: [BatchItem]) -> BatchAnswer {
        BatchAnswer(items: items, answers: items.map { singleAnswer(to: $0.text) })
    }

    /// The answer to a text that is not batched: a document summary or `Answer: ` and the
    /// first sentence.
    public func singleAnswer(to text: String) -> String {
        if let document = ExtractiveSummarizer.document(in: text) {
            return summarizer.summary(of: document)
        }
        var firstSentence: String?
        ExtractiveSummarizer.forEachSentence(in: text, skippingHeadings: false) { sentence in
            firstSentence = sentence
            return false
        }
        guard let first = firstSentence else { return "Answer: (empty prompt)" }
        let trimmed = SimTokens.prefix(of: first, tokens: answerTokens)
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
