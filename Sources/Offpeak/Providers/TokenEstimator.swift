/// Estimates token counts before a call, for budgets and window planning.
///
/// The rule is the one `offpeak-sim` bills with (docs/offpeak-sim.md documents it): one token per four
/// UTF-8 bytes, rounded up. Real tokenizers differ by model; budgets leave headroom for that.
enum TokenEstimator {
    static func tokens(_ text: String) -> Int {
        (text.utf8.count + 3) / 4
    }

    /// Input tokens of a request: the system prompt and every message.
    static func inputTokens(_ request: CompletionRequest) -> Int {
        tokens(request.system ?? "") + request.messages.reduce(0) { $0 + tokens($1.content) }
    }
}
