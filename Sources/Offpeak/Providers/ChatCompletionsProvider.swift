import Foundation
import Logging

/// What a server that speaks OpenAI's chat completions does its own way (DeepSeek, Groq, Mistral):
/// its kind, its base URL, the body of a call and its batch API. Each is a few lines beside its
/// capabilities and prices; `ChatCompletionsProvider` is the rest, written once.
protocol ChatCompletionsDialect: Sendable {
    /// How `description` names the provider (`GroqProvider`).
    static var name: String { get }
    static var kind: ProviderKind { get }
    /// As the provider's docs give it, the path before `/chat/completions` included.
    static var defaultBaseURL: String { get }
    /// The body of a live call.
    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data
    /// The provider's batch API at `baseURL`, over `exchange`; nil: it has none.
    static func batches(baseURL: String, exchange: BatchExchange) -> (any BatchAPI)?
}

/// Completions through a server speaking OpenAI's chat completions (`POST {base}/chat/completions`,
/// the key as a bearer token), in `Dialect`'s way; its answers are read as OpenAI's
/// (`OpenAIProvider.parseResponse`, which reads DeepSeek's usage fields too).
struct ChatCompletionsProvider<Dialect: ChatCompletionsDialect>: HTTPProvider, CustomStringConvertible {
    static var defaultBaseURL: String { Dialect.defaultBaseURL }

    var kind: ProviderKind { Dialect.kind }
    let baseURL: String
    private let apiKey: String
    let transport: ProviderTransport

    init(
        apiKey: String, baseURL: String? = nil, options: ProviderOptions = ProviderOptions(), logger: Logger
    ) {
        self.apiKey = apiKey
        self.baseURL = baseURL ?? Dialect.defaultBaseURL
        self.transport = ProviderTransport(options: options, logger: logger)
    }

    /// Names the endpoint, never the key.
    var description: String { "\(Dialect.name)(\(baseURL))" }

    var endpoint: String { ProviderTransport.endpoint(baseURL, "/chat/completions") }

    /// The dialect's batch API, over the same transport, key and base URL as live calls.
    var batches: (any BatchAPI)? {
        Dialect.batches(baseURL: baseURL, exchange: BatchExchange(transport: transport, headers: headers))
    }

    var headers: [(name: String, value: String)] { OpenAIProvider.headers(apiKey: apiKey) }

    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        try Dialect.requestBody(for: request)
    }

    static func parseResponse(_ body: Data, for request: CompletionRequest, redactor: Redactor)
        throws(ProviderError) -> CompletionResponse
    {
        try OpenAIProvider.parseResponse(body, for: request, redactor: redactor)
    }
}
