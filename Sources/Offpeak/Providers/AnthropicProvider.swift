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
            // The default TTL (five minutes) is left unsaid; an hour is asked for.
            let ttl = request.cacheTTL == .oneHour ? PromptCacheTTL.oneHour.rawValue : nil
            return marked
                ? .blocks([.init(type: "text", text: text, cacheControl: .init(type: "ephemeral", ttl: ttl))])
                : .text(text)
        }
        let body = MessagesRequest(
            model: request.model, maxTokens: request.maxTokens, system: system, messages: request.messages,
            temperature: request.temperature, topP: request.topP,
            stopSequences: request.stop.isEmpty ? nil : request.stop,
            tools: tools(for: request),
            toolChoice: request.answerKeys == nil ? nil : StructuredAnswer.anthropicToolChoice)
        return try ProviderTransport.encode(body)
    }

    /// The request's tools: the forced tool of a structured answer, the web search tool; nil for none.
    private static func tools(for request: CompletionRequest) -> [JSONValue]? {
        var tools: [JSONValue] = []
        if request.answerKeys != nil { tools.append(StructuredAnswer.anthropicTool) }
        if let uses = request.searchUses { tools.append(WebSearch.anthropicTool(maxUses: uses)) }
        return tools.isEmpty ? nil : tools
    }

    /// Reads a 2xx Messages answer into a `CompletionResponse`, normalizing usage.
    ///
    /// Anthropic's cache reads and writes are counted beside `input_tokens`, so each maps
    /// straight onto its `Usage` field; the writes of the 1-hour cache are told apart in
    /// `cache_creation.ephemeral_1h_input_tokens`.
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
                cacheWrite: reported.cacheCreationInputTokens ?? 0,
                cacheWriteHour: reported.hourWrites)
            estimated = false
        }
        // Searches are billed as the provider counts them; an answer that ran some but reported
        // no count is billed for the searches it shows.
        let searches = answer.content.filter { $0.type == "server_tool_use" && $0.name == "web_search" }
        usage.searches = answer.usage?.serverToolUse?.webSearchRequests ?? searches.count
        var response = CompletionResponse(
            text: text, finishReason: finish, usage: usage, model: answer.model ?? request.model,
            id: answer.id,
            usageEstimated: estimated)
        response.citations = citations(in: answer)
        return response
    }

    /// The search results the answer's text cites, each with the query that found it: a result
    /// block names its search (`tool_use_id`), whose input holds the query.
    private static func citations(in answer: MessagesResponse) -> [SearchCitation] {
        var queries: [String: String] = [:]
        for block in answer.content where block.type == "server_tool_use" {
            if let id = block.id, case .object(let input)? = block.input,
                case .string(let query)? = input["query"]
            {
                queries[id] = query
            }
        }
        var queryOfURL: [String: String] = [:]
        for block in answer.content where block.type == "web_search_tool_result" {
            guard case .array(let results)? = block.content, let id = block.toolUseId else { continue }
            for case .object(let result) in results {
                if case .string(let url)? = result["url"], queryOfURL[url] == nil {
                    queryOfURL[url] = queries[id]
                }
            }
        }
        let cited = answer.content.flatMap { $0.citations ?? [] }.compactMap { citation -> SearchCitation? in
            guard let url = citation.url else { return nil }
            return SearchCitation(url: url, title: citation.title, query: queryOfURL[url])
        }
        return SearchCitation.distinct(cited)
    }
}

/// The wire shapes, spelled in camelCase; the coders convert to and from snake_case.
extension AnthropicProvider {
    struct MessagesRequest: Encodable {
        struct Block: Encodable {
            struct CacheControl: Encodable {
                var type: String
                /// `1h`; nil (left out): the default five minutes.
                var ttl: String?
            }
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
            /// A text block's citation of a search result (`web_search_result_location`).
            struct Citation: Decodable {
                var url: String?
                var title: String?
            }

            var type: String
            var text: String?
            /// A `tool_use` or `server_tool_use` block's id, tool and input.
            var id: String?
            var name: String?
            var input: JSONValue?
            /// A `web_search_tool_result` block's search and results (or its error).
            var toolUseId: String?
            var content: JSONValue?
            var citations: [Citation]?
        }

        struct Usage: Decodable {
            struct ServerToolUse: Decodable { var webSearchRequests: Int? }
            var inputTokens: Int?
            var outputTokens: Int?
            var cacheCreationInputTokens: Int?
            /// The writes by TTL, `ephemeral_5m_input_tokens` and `ephemeral_1h_input_tokens`, which add
            /// up to `cache_creation_input_tokens`; a dictionary, whose keys the decoder leaves as sent
            /// (and whose other members, if the API adds some, are not this code's to refuse).
            var cacheCreation: [String: JSONValue]?

            /// The writes to the 1-hour cache.
            var hourWrites: Int {
                if case .int(let tokens)? = cacheCreation?["ephemeral_1h_input_tokens"] { return tokens }
                return 0
            }
            var cacheReadInputTokens: Int?
            var serverToolUse: ServerToolUse?
        }

        var id: String?
        var model: String?
        var content: [Block]
        var stopReason: String?
        var usage: Usage?
    }
}
