import Foundation
import Logging

/// Completions through OpenAI's Responses API (`POST {base}/responses`), where OpenAI documents its
/// newer models first: `store: false` (nothing kept at OpenAI), the system prompt as
/// `instructions`, the output limit as `max_output_tokens`, a batched prompt's shape as
/// `text.format`, flex as `service_tier`. Usage comes as `input_tokens` (the cached ones inside,
/// also in `input_tokens_details.cached_tokens`) and `output_tokens` (reasoning inside). A call that
/// searches the web goes to chat completions' search models as before (`WebSearch`), so the one
/// wire rule for searching holds on both.
///
/// The `openai` provider speaks it at OpenAI itself; OpenAI-compatible servers (llama.cpp, vLLM,
/// Ollama, LiteLLM) keep chat completions (`OpenAIWire`).
struct OpenAIResponsesProvider: HTTPProvider, CustomStringConvertible {
    var kind: ProviderKind { .openai }
    let baseURL: String
    private let apiKey: String
    let transport: ProviderTransport
    /// Chat completions on the same base URL, key and transport: for web searches.
    private let chat: OpenAIProvider

    init(apiKey: String, baseURL: String, options: ProviderOptions, logger: Logger) {
        self.apiKey = apiKey
        self.baseURL = baseURL
        self.transport = ProviderTransport(options: options, logger: logger)
        self.chat = OpenAIProvider(apiKey: apiKey, baseURL: baseURL, options: options, logger: logger)
    }

    /// Names the endpoint, never the key.
    var description: String { "OpenAIResponsesProvider(\(baseURL))" }

    var endpoint: String { ProviderTransport.endpoint(baseURL, "/responses") }

    func endpoint(for request: CompletionRequest) -> String {
        request.searchUses == nil ? endpoint : chat.endpoint
    }

    var headers: [(name: String, value: String)] { OpenAIProvider.headers(apiKey: apiKey) }

    /// OpenAI's Batch API, its requests standing for `/v1/responses` (`OpenAIBatches.responses`).
    var batches: (any BatchAPI)? {
        var batches = OpenAIBatches(
            baseURL: baseURL, exchange: BatchExchange(transport: transport, headers: headers))
        batches.responses = true
        return batches
    }

    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        try requestBody(for: request, lane: .live)
    }

    static func requestBody(for request: CompletionRequest, lane: CallLane) throws(ProviderError) -> Data {
        guard request.searchUses == nil else {
            return try OpenAIProvider.requestBody(for: request, lane: lane)
        }
        return try ProviderTransport.encode(responsesRequest(for: request, lane: lane))
    }

    /// The body `requestBody` sends. Stop sequences have no place in the Responses API: they are left
    /// out (offpeak's own requests set none).
    static func responsesRequest(for request: CompletionRequest, lane: CallLane) -> ResponsesRequest {
        let instructions = request.system.flatMap { $0.isEmpty ? nil : $0 }
        return ResponsesRequest(
            model: request.model,
            input: request.messages.map { .init(role: $0.role.rawValue, content: $0.content) },
            instructions: instructions, maxOutputTokens: max(16, request.maxTokens),
            temperature: request.temperature, topP: request.topP,
            text: request.answerKeys.map {
                .init(
                    format: textFormat(
                        StructuredAnswer.responseFormat(keys: $0, form: request.answerForm ?? .jsonSchema)))
            },
            serviceTier: lane == .flex ? "flex" : nil,
            promptCacheKey: promptCacheKey(for: request, instructions: instructions),
            promptCacheRetention: instructions == nil ? nil : promptCacheRetention(for: request))
    }

    /// `prompt_cache_retention` for a call whose prefix is cached: `24h`, extended retention (its
    /// prefix kept up to a day at no extra price, where the in-memory cache lasts minutes), on the
    /// models OpenAI lists for it; `in_memory` where the job asks for five minutes
    /// (`prompt_cache_ttl: 5m`, kept in memory only) and the model takes that. nil, no field, for a
    /// model that takes neither, which would refuse it.
    static func promptCacheRetention(for request: CompletionRequest) -> String? {
        guard request.cacheSystemPrompt else { return nil }
        switch (ExtendedRetention.of(request.model), request.cacheTTL) {
        case (.none, _), (.only, .fiveMinutes): return nil
        case (.offered, .fiveMinutes): return "in_memory"
        case (.offered, _), (.only, _): return "24h"
        }
    }

    /// Which of OpenAI's models keep a prompt prefix for a day (its prompt-caching guide's list):
    /// GPT-4.1 and GPT-5 through 5.4 offer it beside the in-memory cache; GPT-5.5 and later have it
    /// only. A dated snapshot (`gpt-4.1-2025-04-14`) is its model's.
    enum ExtendedRetention: Equatable {
        case none, offered, only

        static let offeredModels: Set<String> = [
            "gpt-4.1", "gpt-5", "gpt-5-codex", "gpt-5.1", "gpt-5.1-chat", "gpt-5.1-chat-latest",
            "gpt-5.1-codex",
            "gpt-5.1-codex-mini", "gpt-5.1-codex-max", "gpt-5.2", "gpt-5.3-codex", "gpt-5.4",
        ]

        static func of(_ model: String) -> ExtendedRetention {
            var name = Substring(model)
            if let dated = name.firstRange(of: /-\d{4}-\d{2}-\d{2}$/) { name = name[..<dated.lowerBound] }
            if offeredModels.contains(String(name)) { return .offered }
            if let match = name.prefixMatch(of: /gpt-(\d+)\.(\d+)/),
                let major = Int(match.1), let minor = Int(match.2), major > 5 || (major == 5 && minor >= 5)
            {
                return .only
            }
            return .none
        }
    }

    /// `prompt_cache_key`: one per job prefix (its model and system prompt), so OpenAI routes the
    /// calls that share a prefix to the same cache, as its prompt-caching guide advises; nil when the
    /// job asks for no prompt cache or has no prefix. A digest, so no prompt text leaves in it.
    static func promptCacheKey(for request: CompletionRequest, instructions: String?) -> String? {
        guard request.cacheSystemPrompt, let instructions else { return nil }
        return "offpeak-" + SHA256.hex(request.model + "\u{1F}" + instructions).prefix(32)
    }

    /// Chat completions' `response_format` as the Responses API's `text.format`: the same fields, the
    /// `json_schema` object's spread beside `type`.
    static func textFormat(_ responseFormat: JSONValue) -> JSONValue {
        guard case .object(var format) = responseFormat, case .object(let schema)? = format["json_schema"]
        else {
            return responseFormat
        }
        format["json_schema"] = nil
        format.merge(schema) { kept, _ in kept }
        return .object(format)
    }

    static func parseResponse(_ body: Data, for request: CompletionRequest, redactor: Redactor)
        throws(ProviderError) -> CompletionResponse
    {
        guard request.searchUses == nil else {
            return try OpenAIProvider.parseResponse(body, for: request, redactor: redactor)
        }
        let answer = try ProviderTransport.decode(ResponsesResponse.self, from: body, redactor: redactor)
        let text = (answer.output ?? []).filter { $0.type == "message" }.flatMap { $0.content ?? [] }
            .filter { $0.type == "output_text" }.compactMap(\.text).joined()
        let finish: FinishReason
        switch (answer.status, answer.incompleteDetails?.reason) {
        case ("completed", _): finish = .stop
        case ("incomplete", "max_output_tokens"): finish = .length
        default: finish = .other
        }
        var usage = ProviderTransport.estimatedUsage(for: request, text: text)
        var estimated = true
        if let reported = answer.usage, reported.inputTokens != nil || reported.outputTokens != nil {
            let input = reported.inputTokens ?? 0
            let cached = min(input, reported.inputTokensDetails?.cachedTokens ?? 0)
            usage = Usage(input: input - cached, output: reported.outputTokens ?? 0, cacheRead: cached)
            estimated = false
        }
        var response = CompletionResponse(
            text: text, finishReason: finish, usage: usage, model: answer.model ?? request.model,
            id: answer.id,
            usageEstimated: estimated)
        response.serviceTier = answer.serviceTier
        return response
    }
}

/// The wire shapes, spelled in camelCase; the coders convert to and from snake_case.
extension OpenAIResponsesProvider {
    struct ResponsesRequest: Encodable {
        struct Message: Encodable {
            var role: String
            var content: String
        }

        struct Text: Encodable {
            var format: JSONValue
        }

        var model: String
        var input: [Message]
        var instructions: String?
        var maxOutputTokens: Int
        var temperature: Double?
        var topP: Double?
        var text: Text?
        var serviceTier: String?
        var promptCacheKey: String?
        var promptCacheRetention: String?
        /// Nothing is kept at OpenAI: offpeak keeps its own answers.
        var store = false
    }

    struct ResponsesResponse: Decodable {
        struct Item: Decodable {
            struct Content: Decodable {
                var type: String
                var text: String?
            }
            var type: String
            var content: [Content]?
        }

        struct Usage: Decodable {
            struct InputDetails: Decodable { var cachedTokens: Int? }
            var inputTokens: Int?
            var outputTokens: Int?
            var inputTokensDetails: InputDetails?
        }

        struct Incomplete: Decodable { var reason: String? }

        var id: String?
        var model: String?
        var status: String?
        var incompleteDetails: Incomplete?
        var output: [Item]?
        var usage: Usage?
        var serviceTier: String?
    }
}
