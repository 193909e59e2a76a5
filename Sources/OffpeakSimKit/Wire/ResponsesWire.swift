/// `POST /v1/responses` request, as far as the sim reads it; unknown fields are ignored.
struct ResponsesRequest: Decodable, Sendable {
    /// One item of `input`: a message (`type` `message`, or none), its content a string or blocks
    /// (`input_text`).
    struct InputItem: Decodable, Sendable {
        var type: String?
        var role: String?
        var content: TextContent?
    }

    /// `input`: a string (one user message) or a list of items.
    enum Input: Decodable, Sendable {
        case text(String)
        case items([InputItem])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .text(text)
            } else {
                self = .items(try container.decode([InputItem].self))
            }
        }
    }

    struct TextOptions: Decodable, Sendable {
        var format: SimJSON?
    }

    var model: String
    var input: Input
    var instructions: String?
    var maxOutputTokens: Int?
    var temperature: Double?
    var stream: Bool?
    var text: TextOptions?
    var serviceTier: String?
    var store: Bool?
    var promptCacheKey: String?
    /// `in_memory` (the default: minutes) or `24h`, extended retention: a prefix kept up to a day.
    var promptCacheRetention: String?

    enum CodingKeys: String, CodingKey {
        case model, input, instructions, temperature, stream, text, store
        case maxOutputTokens = "max_output_tokens"
        case serviceTier = "service_tier"
        case promptCacheKey = "prompt_cache_key"
        case promptCacheRetention = "prompt_cache_retention"
    }

    /// How long extended retention keeps a prefix.
    static let extendedRetention: Duration = .seconds(24 * 3600)

    /// The conversation (instructions and system or developer items as its system text), the
    /// output limit and the answer's form (`text.format`, read as chat completions'
    /// `response_format`).
    /// - Throws: `SimAPIError` for what the API would refuse.
    func validated() throws -> (conversation: SimConversation, maxTokens: Int, form: AnswerForm) {
        let maxTokens = maxOutputTokens ?? ChatCompletionRequest.defaultMaxTokens
        guard maxTokens >= 16 else {
            throw SimAPIError(
                .invalidRequest,
                "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got "
                    + "\(maxTokens) instead.")
        }
        guard stream != true else {
            throw SimAPIError(.invalidRequest, "stream: streaming is not supported by offpeak-sim")
        }
        var system: [SimConversation.SystemBlock] = instructions.map { [.init(text: $0)] } ?? []
        var rest: [SimConversation.Message] = []
        switch input {
        case .text(let text): rest = [.init(role: "user", texts: [text])]
        case .items(let items):
            for (index, item) in items.enumerated() {
                guard item.type == nil || item.type == "message" else {
                    throw SimAPIError(
                        .invalidRequest, "input[\(index)].type: offpeak-sim reads messages only")
                }
                let texts = item.content?.texts ?? []
                switch item.role {
                case "system", "developer": system += texts.map { .init(text: $0) }
                case "user", "assistant": rest.append(.init(role: item.role ?? "user", texts: texts))
                default:
                    throw SimAPIError(
                        .invalidRequest, "input[\(index)].role: unknown role '\(item.role ?? "")'")
                }
            }
        }
        guard !rest.isEmpty else {
            throw SimAPIError(.invalidRequest, "input: at least one message is required")
        }
        var conversation = SimConversation(system: system, messages: rest)
        switch promptCacheRetention {
        case nil, "in_memory": break
        case "24h": conversation.retention = Self.extendedRetention
        case let other?:
            throw SimAPIError(
                .invalidRequest,
                "Invalid value: '\(other)'. Supported values are: 'in_memory' and '24h'.")
        }
        return (conversation, maxTokens, try Self.form(text?.format))
    }

    /// `text.format` (`{type: json_schema, name, schema, strict}`, flat) read as chat completions'
    /// `response_format` (the schema under `json_schema`).
    static func form(_ format: SimJSON?) throws -> AnswerForm {
        guard let format, format["type"]?.string == "json_schema" else {
            return try AnswerForm.openAI(format)
        }
        guard let schema = format["schema"] else {
            throw SimAPIError(.invalidRequest, "Missing required parameter: 'text.format.schema'.")
        }
        return try AnswerForm.openAI(
            .object(["type": .string("json_schema"), "json_schema": .object(["schema": schema])]))
    }
}

/// `POST /v1/responses` answer, in the shape the `openai` SDK's `Response` parses.
struct ResponsesResponse: Encodable, Sendable {
    struct OutputText: Encodable, Sendable {
        var type = "output_text"
        var text: String
        var annotations: [SimJSON] = []
    }

    struct Message: Encodable, Sendable {
        var type = "message"
        var id: String
        var status = "completed"
        var role = "assistant"
        var content: [OutputText]
    }

    struct Usage: Encodable, Sendable {
        struct InputDetails: Encodable, Sendable {
            var cachedTokens: Int
            enum CodingKeys: String, CodingKey { case cachedTokens = "cached_tokens" }
        }
        struct OutputDetails: Encodable, Sendable {
            var reasoningTokens = 0
            enum CodingKeys: String, CodingKey { case reasoningTokens = "reasoning_tokens" }
        }

        var inputTokens: Int
        var inputTokensDetails: InputDetails
        var outputTokens: Int
        var outputTokensDetails = OutputDetails()
        var totalTokens: Int

        enum CodingKeys: String, CodingKey {
            case inputTokens = "input_tokens"
            case inputTokensDetails = "input_tokens_details"
            case outputTokens = "output_tokens"
            case outputTokensDetails = "output_tokens_details"
            case totalTokens = "total_tokens"
        }
    }

    struct Incomplete: Encodable, Sendable {
        var reason: String
    }

    var id: String
    var object = "response"
    var createdAt: Int
    var status: String
    var incompleteDetails: Nullable<Incomplete>
    var model: String
    var output: [Message]
    var parallelToolCalls = true
    var toolChoice = "auto"
    var tools: [SimJSON] = []
    var maxOutputTokens: Int
    var store = false
    var usage: Usage
    var serviceTier: String
    var error = Nullable<String>.null

    enum CodingKeys: String, CodingKey {
        case id, object, status, model, output, tools, store, usage, error
        case createdAt = "created_at"
        case incompleteDetails = "incomplete_details"
        case parallelToolCalls = "parallel_tool_calls"
        case toolChoice = "tool_choice"
        case maxOutputTokens = "max_output_tokens"
        case serviceTier = "service_tier"
    }

    /// Cached tokens are counted inside `input_tokens`, as OpenAI reports them; an answer cut off at
    /// `max_output_tokens` is `incomplete`.
    init(
        id: String, createdAt: Int, model: String, answer: SimAnswer, billing: InputBilling,
        maxOutputTokens: Int,
        serviceTier: String
    ) {
        self.id = id
        self.createdAt = createdAt
        self.model = model
        self.status = answer.hitMaxTokens ? "incomplete" : "completed"
        self.incompleteDetails = Nullable(answer.hitMaxTokens ? Incomplete(reason: "max_output_tokens") : nil)
        self.output = [Message(id: "msg_sim" + randomHex(), content: [OutputText(text: answer.text)])]
        self.maxOutputTokens = maxOutputTokens
        self.serviceTier = serviceTier
        self.usage = Usage(
            inputTokens: billing.total, inputTokensDetails: .init(cachedTokens: billing.cacheRead),
            outputTokens: answer.outputTokens, totalTokens: billing.total + answer.outputTokens)
    }
}
