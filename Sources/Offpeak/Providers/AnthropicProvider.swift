import Foundation
import Logging

/// Completions through the Anthropic Messages API (`POST {base}/v1/messages`); also the shape
/// `offpeak-sim` speaks.
struct AnthropicProvider: HTTPProvider, CustomStringConvertible {
    static let defaultBaseURL = "https://api.anthropic.com"
    /// The API version the request and answer shapes below follow.
    static let apiVersion = "2023-06-01"

    let kind: ProviderKind
    let baseURL: String
    private let apiKey: String
    let transport: ProviderTransport

    /// - Parameters:
    ///   - apiKey: sent as `x-api-key`; never logged or printed.
    ///   - baseURL: without `/v1`, as `ANTHROPIC_BASE_URL` is; `nil` means the public API.
    ///   - kind: `.sim` when this speaks to `offpeak-sim`.
    init(
        apiKey: String, baseURL: String? = nil, kind: ProviderKind = .anthropic,
        options: ProviderOptions = ProviderOptions(),
        logger: Logger
    ) {
        self.apiKey = apiKey
        self.baseURL = baseURL ?? Self.defaultBaseURL
        self.kind = kind
        self.transport = ProviderTransport(options: options, logger: logger)
    }

    /// Names the endpoint, never the key.
    var description: String { "AnthropicProvider(\(kind.rawValue), \(baseURL))" }

    var endpoint: String { ProviderTransport.endpoint(baseURL, "/v1/messages") }

    /// Message Batches, over the same transport, key and base URL as live calls.
    var batches: (any BatchAPI)? {
        guard kind == .anthropic || kind == .sim else { return nil }
        return AnthropicBatches(
            baseURL: baseURL, exchange: BatchExchange(transport: transport, headers: headers))
    }

    var headers: [(name: String, value: String)] {
        [
            (name: "x-api-key", value: apiKey), (name: "anthropic-version", value: Self.apiVersion),
            (name: "content-type", value: "application/json"),
        ]
    }

    /// The JSON body of a Messages call. Optional settings are left out when unset, so the API's
    /// own defaults apply. The system prompt is marked cacheable only when the request asks for
    /// it and the model would cache it (`PromptCacheMinimum`); otherwise it is a plain string.
    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        let system = request.system.flatMap { text -> MessagesRequest.System? in
            guard !text.isEmpty else { return nil }
            let marked =
                request.cacheSystemPrompt
                && PromptCacheMinimum.pays(model: request.model, prefixTokens: TokenEstimator.tokens(text))
            return marked
                ? .blocks([.init(type: "text", text: text, cacheControl: .init(type: "ephemeral"))])
                : .text(text)
        }
        let body = MessagesRequest(
            model: request.model, maxTokens: request.maxTokens, system: system, messages: request.messages,
            temperature: request.temperature, topP: request.topP,
            stopSequences: request.stop.isEmpty ? nil : request.stop,
            tools: request.answerKeys == nil ? nil : [StructuredAnswer.anthropicTool],
            toolChoice: request.answerKeys == nil ? nil : StructuredAnswer.anthropicToolChoice)
        return try ProviderTransport.encode(body)
    }

    /// Reads a 2xx Messages answer into a `CompletionResponse`, normalizing usage.
    ///
    /// Anthropic's cache reads and writes are counted beside `input_tokens`, so each maps
    /// straight onto its `Usage` field.
    static func parseResponse(_ body: Data, for request: CompletionRequest, redactor: Redactor)
        throws(ProviderError) -> CompletionResponse
    {
        let answer = try ProviderTransport.decode(MessagesResponse.self, from: body, redactor: redactor)
        var text = answer.content.filter { $0.type == "text" }.compactMap(\.text).joined()
        // A forced tool call carries the structured answer as its input: read as the JSON text a
        // batched answer is, so the splitter checks it like any other.
        // Read by the tool's name, not by the request: a provider batch's results are read against a
        // call planned again, which may not ask for the form the call was sent with.
        let forced = answer.content.first { $0.type == "tool_use" && $0.name == StructuredAnswer.name }
        if let input = forced?.input { text = CanonicalJSON.text(input) }
        let finish: FinishReason
        switch answer.stopReason {
        case "end_turn", "stop_sequence": finish = .stop
        case "tool_use" where forced != nil: finish = .stop
        case "max_tokens": finish = .length
        default: finish = .other
        }
        var usage = ProviderTransport.estimatedUsage(for: request, text: text)
        var estimated = true
        if let reported = answer.usage, reported.inputTokens != nil || reported.outputTokens != nil {
            usage = Usage(
                input: reported.inputTokens ?? 0, output: reported.outputTokens ?? 0,
                cacheRead: reported.cacheReadInputTokens ?? 0,
                cacheWrite: reported.cacheCreationInputTokens ?? 0)
            estimated = false
        }
        return CompletionResponse(
            text: text, finishReason: finish, usage: usage, model: answer.model ?? request.model,
            id: answer.id,
            usageEstimated: estimated)
    }
}

/// The wire shapes, spelled in camelCase; the coders convert to and from snake_case.
extension AnthropicProvider {
    struct MessagesRequest: Encodable {
        struct Block: Encodable {
            struct CacheControl: Encodable { var type: String }
            var type: String
            var text: String
            var cacheControl: CacheControl
        }

        /// A plain string, or text blocks when the prompt carries a cache breakpoint.
        enum System: Encodable {
            case text(String)
            case blocks([Block])

            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .text(let text): try container.encode(text)
                case .blocks(let blocks): try container.encode(blocks)
                }
            }
        }

        var model: String
        var maxTokens: Int
        var system: System?
        var messages: [ChatMessage]
        var temperature: Double?
        var topP: Double?
        var stopSequences: [String]?
        /// The forced tool of a structured batched answer (`StructuredAnswer`).
        var tools: [JSONValue]?
        var toolChoice: JSONValue?
    }

    struct MessagesResponse: Decodable {
        struct Block: Decodable {
            var type: String
            var text: String?
            /// A `tool_use` block's tool and input.
            var name: String?
            var input: JSONValue?
        }

        struct Usage: Decodable {
            var inputTokens: Int?
            var outputTokens: Int?
            var cacheCreationInputTokens: Int?
            var cacheReadInputTokens: Int?
        }

        var id: String?
        var model: String?
        var content: [Block]
        var stopReason: String?
        var usage: Usage?
    }
}
