import Foundation
import Logging

/// Completions through Groq's API, which speaks OpenAI's chat completions under `/openai/v1`
/// (`POST {base}/chat/completions`), and OpenAI's files and batches API at the same base for its
/// Batch API (`OpenAIBatches`): batches that stand for `/v1/chat/completions`, 25% off.
/// Its Llama models take JSON mode (`json_object`) and no schema, so a batched prompt asks for its
/// shape that way, live and in a batch.
struct GroqProvider: HTTPProvider, CustomStringConvertible {
    /// As Groq's docs give it, `/openai/v1` included.
    static let defaultBaseURL = "https://api.groq.com/openai/v1"

    var kind: ProviderKind { .groq }
    let baseURL: String
    private let apiKey: String
    let transport: ProviderTransport

    init(
        apiKey: String, baseURL: String? = nil, options: ProviderOptions = ProviderOptions(), logger: Logger
    ) {
        self.apiKey = apiKey
        self.baseURL = baseURL ?? Self.defaultBaseURL
        self.transport = ProviderTransport(options: options, logger: logger)
    }

    /// Names the endpoint, never the key.
    var description: String { "GroqProvider(\(baseURL))" }

    var endpoint: String { ProviderTransport.endpoint(baseURL, "/chat/completions") }

    /// Groq's Batch API: OpenAI's, its lines shaped as the live calls are.
    var batches: (any BatchAPI)? {
        var batches = OpenAIBatches(
            baseURL: baseURL, exchange: BatchExchange(transport: transport, headers: headers))
        batches.chatBody = { request throws(ProviderError) in try Self.requestBody(for: request) }
        return batches
    }

    var headers: [(name: String, value: String)] { OpenAIProvider.headers(apiKey: apiKey) }

    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        try OpenAIProvider.jsonModeBody(for: request)
    }

    static func parseResponse(_ body: Data, for request: CompletionRequest, redactor: Redactor)
        throws(ProviderError) -> CompletionResponse
    {
        try OpenAIProvider.parseResponse(body, for: request, redactor: redactor)
    }
}
