/// `POST /v1/messages` request, as far as the sim reads it; unknown fields are ignored.
struct AnthropicRequest: Decodable, Sendable {
    struct Message: Decodable, Sendable {
        var role: String
        var content: TextContent
    }

    var model: String
    /// Optional here so its absence is reported as Anthropic does, not as a decoding error.
    var maxTokens: Int?
    var system: TextContent?
    var messages: [Message]
    var temperature: Double?
    var topP: Double?
    var stopSequences: [String]?
    var stream: Bool?

    enum CodingKeys: String, CodingKey {
        case model, system, messages, temperature, stream
        case maxTokens = "max_tokens"
        case topP = "top_p"
        case stopSequences = "stop_sequences"
    }

    /// - Throws: `SimAPIError` for what the Messages API would refuse.
    func validated() throws -> (conversation: SimConversation, maxTokens: Int) {
        guard let maxTokens else { throw SimAPIError(.invalidRequest, "max_tokens: field required") }
        guard maxTokens >= 1 else { throw SimAPIError(.invalidRequest, "max_tokens: must be at least 1") }
        guard stream != true else {
            throw SimAPIError(.invalidRequest, "stream: streaming is not supported by offpeak-sim")
        }
        guard !messages.isEmpty else {
            throw SimAPIError(.invalidRequest, "messages: at least one message is required")
        }
        for (index, message) in messages.enumerated() where !["user", "assistant"].contains(message.role) {
            throw SimAPIError(
                .invalidRequest,
                "messages.\(index).role: expected 'user' or 'assistant', got '\(message.role)'")
        }
        let conversation = SimConversation(
            system: system?.systemBlocks ?? [],
            messages: messages.map { .init(role: $0.role, texts: $0.content.texts) })
        return (conversation, maxTokens)
    }
}

/// `POST /v1/messages` answer, in the shape the `anthropic` SDK's `Message` model parses.
struct AnthropicResponse: Encodable, Sendable {
    struct Block: Encodable, Sendable {
        var type = "text"
        var text: String
    }

    struct Usage: Encodable, Sendable {
        var inputTokens: Int
        var outputTokens: Int
        var cacheCreationInputTokens: Int
        var cacheReadInputTokens: Int

        enum CodingKeys: String, CodingKey {
            case inputTokens = "input_tokens"
            case outputTokens = "output_tokens"
            case cacheCreationInputTokens = "cache_creation_input_tokens"
            case cacheReadInputTokens = "cache_read_input_tokens"
        }
    }

    var id: String
    var type = "message"
    var role = "assistant"
    var model: String
    var content: [Block]
    var stopReason: String
    var stopSequence = Nullable<String>.null
    var usage: Usage

    enum CodingKeys: String, CodingKey {
        case id, type, role, model, content, usage
        case stopReason = "stop_reason"
        case stopSequence = "stop_sequence"
    }

    init(id: String, model: String, answer: SimAnswer, billing: InputBilling) {
        self.id = id
        self.model = model
        self.content = [Block(text: answer.text)]
        self.stopReason = answer.hitMaxTokens ? "max_tokens" : "end_turn"
        self.usage = Usage(
            inputTokens: billing.uncached, outputTokens: answer.outputTokens,
            cacheCreationInputTokens: billing.cacheCreation, cacheReadInputTokens: billing.cacheRead)
    }
}
