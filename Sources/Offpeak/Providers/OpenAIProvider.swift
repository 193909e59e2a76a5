import Foundation
import Logging

/// Completions through the OpenAI chat completions API (`POST {base}/chat/completions`), which
/// local servers (llama.cpp, vLLM, Ollama, LiteLLM) speak too.
struct OpenAIProvider: HTTPProvider, CustomStringConvertible {
    /// Includes `/v1`, as `OPENAI_BASE_URL` does in the official SDKs.
    static let defaultBaseURL = "https://api.openai.com/v1"

    var kind: ProviderKind { .openai }
    let baseURL: String
    private let apiKey: String
    let transport: ProviderTransport

    /// - Parameters:
    ///   - apiKey: sent as a bearer token; never logged or printed.
    ///   - baseURL: including `/v1`; `nil` means the public API.
    init(
        apiKey: String, baseURL: String? = nil, options: ProviderOptions = ProviderOptions(), logger: Logger
    ) {
        self.apiKey = apiKey
        self.baseURL = baseURL ?? Self.defaultBaseURL
        self.transport = ProviderTransport(options: options, logger: logger)
    }

    /// Names the endpoint, never the key.
    var description: String { "OpenAIProvider(\(baseURL))" }

    var endpoint: String { ProviderTransport.endpoint(baseURL, "/chat/completions") }

    /// The Batch API, over the same transport, key and base URL as live calls.
    var batches: (any BatchAPI)? {
        OpenAIBatches(baseURL: baseURL, exchange: BatchExchange(transport: transport, headers: headers))
    }

    var headers: [(name: String, value: String)] { Self.headers(apiKey: apiKey) }

    /// A JSON request with the key as a bearer token: OpenAI's, and every server speaking its wire.
    static func headers(apiKey: String) -> [(name: String, value: String)] {
        [
            (name: "authorization", value: "Bearer \(apiKey)"),
            (name: "content-type", value: "application/json"),
        ]
    }

    /// Reasoning models reject `max_tokens` and want `max_completion_tokens` instead.
    static func usesCompletionTokenLimit(_ model: String) -> Bool {
        let name = model.split(separator: "/").last.map(String.init) ?? model
        return ["o1", "o3", "o4", "gpt-5"].contains { name.hasPrefix($0) }
    }

    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        try requestBody(for: request, lane: .live)
    }

    /// The JSON body of a chat completion: the system prompt becomes the first message; a flex
    /// call says `service_tier: "flex"` (a live one leaves the field out: the project's default).
    /// A search model's call leaves out `temperature` and `top_p`, which it refuses
    /// (`WebSearchSupport`); the request keeps them, and with them its cache key.
    static func requestBody(for request: CompletionRequest, lane: CallLane) throws(ProviderError) -> Data {
        try ProviderTransport.encode(chatRequest(for: request, lane: lane))
    }

    /// A live chat completion whose answer shape is asked for as JSON mode (`json_object`, no
    /// schema): how the servers that speak the wire but take no schema want it (DeepSeek, Groq's
    /// Llama models). The batched prompt says "JSON", which the mode requires of the prompt.
    static func jsonModeBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        var body = chatRequest(for: request, lane: .live)
        if body.responseFormat != nil { body.responseFormat = .object(["type": .string("json_object")]) }
        return try ProviderTransport.encode(body)
    }

    /// The chat completion `requestBody` sends, for a provider speaking the same wire to shape further
    /// (`DeepSeekProvider`).
    static func chatRequest(for request: CompletionRequest, lane: CallLane) -> ChatRequest {
        var messages = request.messages.map {
            ChatRequest.Message(role: $0.role.rawValue, content: $0.content)
        }
        if let system = request.system, !system.isEmpty {
            messages.insert(ChatRequest.Message(role: "system", content: system), at: 0)
        }
        let reasoning = usesCompletionTokenLimit(request.model)
        let sampled = capabilities.webSearch?.takesNoSampling(request.model) != true
        return ChatRequest(
            model: request.model, messages: messages, maxTokens: reasoning ? nil : request.maxTokens,
            maxCompletionTokens: reasoning ? request.maxTokens : nil,
            temperature: sampled ? request.temperature : nil, topP: sampled ? request.topP : nil,
            stop: request.stop.isEmpty ? nil : request.stop,
            responseFormat: request.answerKeys.map {
                StructuredAnswer.responseFormat(keys: $0, form: request.answerForm ?? .jsonSchema)
            },
            webSearchOptions: request.searchUses == nil ? nil : .object([:]),
            serviceTier: lane == .flex ? "flex" : nil)
    }

    /// Reads a 2xx chat completion into a `CompletionResponse`, normalizing usage.
    ///
    /// OpenAI counts `cached_tokens` inside `prompt_tokens`, so the uncached input is the
    /// difference; there is no cache-write charge. A server that reports DeepSeek's
    /// `prompt_cache_hit_tokens` (DeepSeek, and proxies passing its usage on) is read by those:
    /// the hit tokens are the cached part of `prompt_tokens`, the miss tokens the rest.
    static func parseResponse(_ body: Data, for request: CompletionRequest, redactor: Redactor)
        throws(ProviderError) -> CompletionResponse
    {
        let answer = try ProviderTransport.decode(ChatResponse.self, from: body, redactor: redactor)
        guard let choice = answer.choices.first else { throw .badResponse("answer has no `choices`") }
        let text = choice.message?.content ?? ""
        let finish: FinishReason
        switch choice.finishReason {
        case "stop": finish = .stop
        case "length": finish = .length
        default: finish = .other
        }
        var usage = ProviderTransport.estimatedUsage(for: request, text: text)
        var estimated = true
        if let reported = answer.usage, reported.promptTokens != nil || reported.completionTokens != nil {
            let prompt = reported.promptTokens ?? 0
            let cached = min(
                prompt, reported.promptCacheHitTokens ?? reported.promptTokensDetails?.cachedTokens ?? 0)
            usage = Usage(input: prompt - cached, output: reported.completionTokens ?? 0, cacheRead: cached)
            estimated = false
        }
        if request.searchUses != nil { usage.searches = WebSearch.searchesPerOpenAICall }
        var response = CompletionResponse(
            text: text, finishReason: finish, usage: usage, model: answer.model ?? request.model,
            id: answer.id,
            usageEstimated: estimated)
        response.serviceTier = answer.serviceTier
        response.citations = SearchCitation.distinct(
            (choice.message?.annotations ?? []).compactMap { annotation in
                guard annotation.type == "url_citation", let cited = annotation.urlCitation else {
                    return nil
                }
                return SearchCitation(url: cited.url, title: cited.title)
            })
        return response
    }
}

/// The wire shapes, spelled in camelCase; the coders convert to and from snake_case.
extension OpenAIProvider {
    struct ChatRequest: Encodable {
        struct Message: Encodable {
            var role: String
            var content: String
        }

        var model: String
        var messages: [Message]
        var maxTokens: Int?
        var maxCompletionTokens: Int?
        var temperature: Double?
        var topP: Double?
        var stop: [String]?
        /// A batched prompt's answer schema (`StructuredAnswer`); dictionary keys are sent as they are.
        var responseFormat: JSONValue?
        /// `{}` when the call may search the web (`WebSearch`).
        var webSearchOptions: JSONValue?
        /// `flex` for a flex call (`CallLane.flex`).
        var serviceTier: String?
    }

    struct ChatResponse: Decodable {
        struct Choice: Decodable {
            struct Message: Decodable {
                /// A `url_citation` of a web search result the text rests on.
                struct Annotation: Decodable {
                    struct URLCitation: Decodable {
                        var url: String
                        var title: String?
                    }
                    var type: String
                    var urlCitation: URLCitation?
                }
                var content: String?
                var annotations: [Annotation]?
            }
            var message: Message?
            var finishReason: String?
        }

        struct Usage: Decodable {
            struct Details: Decodable { var cachedTokens: Int? }
            var promptTokens: Int?
            var completionTokens: Int?
            var promptTokensDetails: Details?
            /// DeepSeek's: the prompt's tokens read from its context cache.
            var promptCacheHitTokens: Int?
        }

        var id: String?
        var model: String?
        var choices: [Choice]
        var usage: Usage?
        /// The tier that answered, as OpenAI reports it.
        var serviceTier: String?
    }
}
