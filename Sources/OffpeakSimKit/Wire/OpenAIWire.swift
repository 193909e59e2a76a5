/// `POST /v1/chat/completions` request, as far as the sim reads it; unknown fields are ignored.
struct ChatCompletionRequest: Decodable, Sendable {
    struct Message: Decodable, Sendable {
        var role: String
        /// Null for an assistant message that only called tools.
        var content: TextContent?
    }

    /// The output limit when a request gives none, as a generous server would apply.
    static let defaultMaxTokens = 4096

    var model: String
    var messages: [Message]
    var maxTokens: Int?
    var maxCompletionTokens: Int?
    var temperature: Double?
    var topP: Double?
    var frequencyPenalty: Double?
    var presencePenalty: Double?
    var stream: Bool?
    var n: Int?
    var responseFormat: SimJSON?
    /// `{}` (or its options) when the call may search the web, as OpenAI's search models take it.
    var webSearchOptions: SimJSON?
    /// `flex` asks for flex processing; `auto`, `default` or none: the live tier.
    var serviceTier: String?

    enum CodingKeys: String, CodingKey {
        case model, messages, temperature, stream, n
        case serviceTier = "service_tier"
        case responseFormat = "response_format"
        case webSearchOptions = "web_search_options"
        case maxTokens = "max_tokens"
        case maxCompletionTokens = "max_completion_tokens"
        case topP = "top_p"
        case frequencyPenalty = "frequency_penalty"
        case presencePenalty = "presence_penalty"
    }

    /// Whether `model` is one of OpenAI's search models (`gpt-4o-search-preview`,
    /// `gpt-5-search-api`): its name has `-search`.
    static func isSearchModel(_ model: String) -> Bool {
        let name = model.split(separator: "/").last.map(String.init) ?? model
        return name.contains("-search")
    }

    /// Refuses what OpenAI refuses around web search: `web_search_options` to a model that is not
    /// a search model, and sampling arguments to one that is.
    /// - Throws: `SimAPIError` with OpenAI's message.
    func checkSearch() throws {
        guard Self.isSearchModel(model) else {
            if webSearchOptions != nil {
                throw SimAPIError(.invalidRequest, "Web search options not supported with this model.")
            }
            return
        }
        let supplied: [(String, Bool)] = [
            ("frequency_penalty", frequencyPenalty != nil), ("n", n != nil),
            ("presence_penalty", presencePenalty != nil), ("temperature", temperature != nil),
            ("top_p", topP != nil),
        ]
        let refused = supplied.filter(\.1).map(\.0)
        guard !refused.isEmpty else { return }
        let arguments = refused.count == 1 ? "argument" : "arguments"
        throw SimAPIError(
            .invalidRequest,
            "Model incompatible request \(arguments) supplied: \(refused.joined(separator: ", "))")
    }

    /// System and developer messages become the conversation's system text (OpenAI's automatic
    /// cache keys on it); the others are the messages.
    /// - Throws: `SimAPIError` for what the API would refuse.
    func validated() throws -> (conversation: SimConversation, maxTokens: Int, form: AnswerForm) {
        let maxTokens = maxCompletionTokens ?? maxTokens ?? Self.defaultMaxTokens
        guard maxTokens >= 1 else { throw SimAPIError(.invalidRequest, "max_tokens: must be at least 1") }
        guard stream != true else {
            throw SimAPIError(.invalidRequest, "stream: streaming is not supported by offpeak-sim")
        }
        guard (n ?? 1) == 1 else {
            throw SimAPIError(.invalidRequest, "n: offpeak-sim answers with one choice")
        }
        guard !messages.isEmpty else {
            throw SimAPIError(.invalidRequest, "messages: at least one message is required")
        }
        try checkSearch()
        var system: [SimConversation.SystemBlock] = []
        var rest: [SimConversation.Message] = []
        for (index, message) in messages.enumerated() {
            let texts = message.content?.texts ?? []
            switch message.role {
            case "system", "developer": system += texts.map { .init(text: $0) }
            case "user", "assistant", "tool": rest.append(.init(role: message.role, texts: texts))
            default:
                throw SimAPIError(.invalidRequest, "messages.\(index).role: unknown role '\(message.role)'")
            }
        }
        return (
            SimConversation(system: system, messages: rest), maxTokens, try AnswerForm.openAI(responseFormat)
        )
    }
}

/// `POST /v1/chat/completions` answer, in the shape the `openai` SDK's `ChatCompletion` parses.
struct ChatCompletionResponse: Encodable, Sendable {
    struct Choice: Encodable, Sendable {
        var index = 0
        var message: Message
        var finishReason: String
        var logprobs = Nullable<String>.null

        enum CodingKeys: String, CodingKey {
            case index, message, logprobs
            case finishReason = "finish_reason"
        }
    }

    struct Message: Encodable, Sendable {
        var role = "assistant"
        var content: String
        var refusal = Nullable<String>.null
        /// `url_citation`s of the search results the answer rests on (a search model's).
        var annotations: [SimJSON]?
    }

    struct Usage: Encodable, Sendable {
        struct PromptDetails: Encodable, Sendable {
            var cachedTokens: Int
            enum CodingKeys: String, CodingKey { case cachedTokens = "cached_tokens" }
        }

        var promptTokens: Int
        var completionTokens: Int
        var totalTokens: Int
        /// OpenAI's report of the cached part; DeepSeek sends its own two fields instead.
        var promptTokensDetails: PromptDetails?
        var promptCacheHitTokens: Int?
        var promptCacheMissTokens: Int?

        enum CodingKeys: String, CodingKey {
            case promptTokens = "prompt_tokens"
            case completionTokens = "completion_tokens"
            case totalTokens = "total_tokens"
            case promptTokensDetails = "prompt_tokens_details"
            case promptCacheHitTokens = "prompt_cache_hit_tokens"
            case promptCacheMissTokens = "prompt_cache_miss_tokens"
        }
    }

    var id: String
    var object = "chat.completion"
    var created: Int
    var model: String
    var choices: [Choice]
    var usage: Usage
    /// The tier that answered: `flex`, or `default`; nil for an API that names none (DeepSeek).
    var serviceTier: String?

    enum CodingKeys: String, CodingKey {
        case id, object, created, model, choices, usage
        case serviceTier = "service_tier"
    }

    /// OpenAI reports cached tokens inside `prompt_tokens`, so the prompt is the whole input.
    /// - Parameter searches: the web search the call ran: its first result cited over the answer.
    init(
        id: String, created: Int, model: String, answer: SimAnswer, billing: InputBilling,
        searches: [SimWebSearch.Search] = [], serviceTier: String = "default"
    ) {
        self.serviceTier = serviceTier
        self.id = id
        self.created = created
        self.model = model
        var message = Message(content: answer.text)
        if !searches.isEmpty {
            let length = answer.text.utf16.count
            message.annotations = searches.compactMap(\.results.first).map { result in
                .object([
                    "type": .string("url_citation"),
                    "url_citation": .object([
                        "url": .string(result.url), "title": .string(result.title), "start_index": .number(0),
                        "end_index": .number(Double(length)),
                    ]),
                ])
            }
        }
        self.choices = [Choice(message: message, finishReason: answer.hitMaxTokens ? "length" : "stop")]
        self.usage = Usage(
            promptTokens: billing.total, completionTokens: answer.outputTokens,
            totalTokens: billing.total + answer.outputTokens,
            promptTokensDetails: .init(cachedTokens: billing.cacheRead))
    }
}
