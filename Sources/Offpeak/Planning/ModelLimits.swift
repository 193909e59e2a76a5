/// What a model can read and write, from the price table (`max_input_tokens`,
/// `max_output_tokens`): a request past either is never sent, since the provider could only refuse
/// it, or cut its answer, after a round trip that may be billed.
public struct ModelLimits: Sendable, Equatable {
    let model: String
    /// The context window for input, in tokens; `nil` when the table does not say.
    let maxInputTokens: Int?
    /// The longest answer, in tokens; `nil` when the table does not say.
    let maxOutputTokens: Int?

    init(model: String, price: ModelPrice?) {
        self.model = model
        maxInputTokens = price?.maxInputTokens
        // LiteLLM's older `max_tokens` is the output limit where `max_output_tokens` is missing.
        maxOutputTokens = price?.maxOutputTokens ?? price?.maxTokens
    }

    /// Why `maxTokens` cannot be asked of the model, or `nil`.
    public func outputProblem(maxTokens: Int) -> String? {
        guard let limit = maxOutputTokens, maxTokens > limit else { return nil }
        return "\(maxTokens) is more than \(model) can write (max_output_tokens \(limit) in the price table)"
    }

    /// Why `request` cannot be sent to the model, or `nil`.
    func refusal(of request: CompletionRequest) -> String? {
        let input = TokenEstimator.inputTokens(request)
        if let limit = maxInputTokens, input > limit {
            return "not sent: the request is about \(input) tokens, more than \(model)'s context window "
                + "(max_input_tokens \(limit) in the price table); shorten the item"
        }
        return outputProblem(maxTokens: request.maxTokens).map { "not sent: max_tokens \($0)" }
    }
}
