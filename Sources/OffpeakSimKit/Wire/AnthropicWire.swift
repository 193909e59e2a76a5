import Foundation

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
    var tools: [SimJSON]?
    var toolChoice: SimJSON?

    enum CodingKeys: String, CodingKey {
        case model, system, messages, temperature, stream, tools
        case maxTokens = "max_tokens"
        case topP = "top_p"
        case stopSequences = "stop_sequences"
        case toolChoice = "tool_choice"
    }

    /// - Throws: `SimAPIError` for what the Messages API would refuse.
    func validated() throws -> (conversation: SimConversation, maxTokens: Int, form: AnswerForm) {
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
        var conversation = SimConversation(
            system: system?.systemBlocks ?? [],
            messages: messages.map { .init(role: $0.role, texts: $0.content.texts) })
        let form = try AnswerForm.anthropic(tools: tools, choice: toolChoice)
        if let tools, !tools.isEmpty {
            conversation.tools = String(buffer: JSONBody.encode(tools))
            conversation.toolTokens = SimTokens.count(conversation.tools) + AnswerForm.toolSystemPromptTokens
        }
        return (conversation, maxTokens, form)
    }
}

/// `POST /v1/messages` answer, in the shape the `anthropic` SDK's `Message` model parses.
struct AnthropicResponse: Encodable, Sendable {
    /// A text block, or the `tool_use` block of a forced tool call.
    struct Block: Encodable, Sendable {
        var type = "text"
        var text: String?
        var id: String?
        var name: String?
        var input: SimJSON?
        /// A `web_search_tool_result` block's search and its results.
        var toolUseId: String?
        var content: SimJSON?
        /// A text block's citations of search results.
        var citations: SimJSON?

        enum CodingKeys: String, CodingKey {
            case type, text, id, name, input, content, citations
            case toolUseId = "tool_use_id"
        }
    }

    struct Usage: Encodable, Sendable {
        var inputTokens: Int
        var outputTokens: Int
        var cacheCreationInputTokens: Int
        /// The writes by TTL, which add up to `cache_creation_input_tokens`.
        var cacheCreation: CacheCreation
        var cacheReadInputTokens: Int
        /// `{"web_search_requests": N}` when the call searched.
        var serverToolUse: SimJSON?

        struct CacheCreation: Encodable, Sendable {
            var ephemeral5mInputTokens: Int
            var ephemeral1hInputTokens: Int

            enum CodingKeys: String, CodingKey {
                case ephemeral5mInputTokens = "ephemeral_5m_input_tokens"
                case ephemeral1hInputTokens = "ephemeral_1h_input_tokens"
            }
        }

        enum CodingKeys: String, CodingKey {
            case inputTokens = "input_tokens"
            case outputTokens = "output_tokens"
            case cacheCreationInputTokens = "cache_creation_input_tokens"
            case cacheCreation = "cache_creation"
            case cacheReadInputTokens = "cache_read_input_tokens"
            case serverToolUse = "server_tool_use"
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

    /// - Parameter form: a forced tool (`AnswerForm.tool`) answers with a `tool_use` block whose
    ///   input is the answer's JSON object (empty when `max_tokens` cut it).
    /// - Parameter searches: the web searches the call ran: each a `server_tool_use` block and a
    ///   `web_search_tool_result` block before the answer, whose text cites each search's first
    ///   result, as Anthropic's answers do.
    init(
        id: String, model: String, answer: SimAnswer, billing: InputBilling, form: AnswerForm = .text,
        searches: [SimWebSearch.Search] = []
    ) {
        self.id = id
        self.model = model
        if case .tool(let name) = form {
            let input = try? JSONDecoder().decode(SimJSON.self, from: Data(answer.text.utf8))
            let object = answer.hitMaxTokens ? nil : input
            self.content = [
                Block(
                    type: "tool_use", text: nil, id: "toolu_sim_" + randomHex(), name: name,
                    input: object ?? .object([:]))
            ]
            self.stopReason = answer.hitMaxTokens ? "max_tokens" : "tool_use"
        } else {
            var text = Block(text: answer.text)
            if !searches.isEmpty { text.citations = .array(searches.compactMap(Self.citation)) }
            self.content = searches.enumerated().flatMap(Self.searchBlocks) + [text]
            self.stopReason = answer.hitMaxTokens ? "max_tokens" : "end_turn"
        }
        self.usage = Usage(
            inputTokens: billing.uncached, outputTokens: answer.outputTokens,
            cacheCreationInputTokens: billing.cacheCreation,
            cacheCreation: .init(
                ephemeral5mInputTokens: billing.cacheCreation - billing.cacheCreationHour,
                ephemeral1hInputTokens: billing.cacheCreationHour),
            cacheReadInputTokens: billing.cacheRead,
            serverToolUse: searches.isEmpty
                ? nil : .object(["web_search_requests": .number(Double(searches.count))]))
    }
}

extension AnthropicResponse {
    /// One search as the answer shows it: the model's `server_tool_use`, then its results.
    fileprivate static func searchBlocks(_ index: Int, _ search: SimWebSearch.Search) -> [Block] {
        let id = "srvtoolu_sim_\(index + 1)_" + SimWebSearch.slug(search.query)
        let results: [SimJSON] = search.results.map { result in
            .object([
                "type": .string("web_search_result"), "url": .string(result.url),
                "title": .string(result.title),
                "page_age": .string(result.pageAge),
                "encrypted_content": .string(Data(result.url.utf8).base64EncodedString()),
            ])
        }
        return [
            Block(
                type: "server_tool_use", id: id, name: "web_search",
                input: .object(["query": .string(search.query)])),
            Block(type: "web_search_tool_result", toolUseId: id, content: .array(results)),
        ]
    }

    /// The citation of a search's first result.
    fileprivate static func citation(_ search: SimWebSearch.Search) -> SimJSON? {
        guard let first = search.results.first else { return nil }
        return .object([
            "type": .string("web_search_result_location"), "url": .string(first.url),
            "title": .string(first.title), "cited_text": .string("What \(search.query) says."),
            "encrypted_index": .string(Data(first.url.utf8).base64EncodedString()),
        ])
    }
}
