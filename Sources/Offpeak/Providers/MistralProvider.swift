import Foundation
import Logging

/// Completions through Mistral's API, which speaks OpenAI's chat completions
/// (`POST {base}/chat/completions`, base `https://api.mistral.ai/v1`) and refuses any field it does
/// not know with a 422, so a call carries only the fields both share; and its batch jobs
/// (`MistralBatches`), at half price.
struct MistralProvider: HTTPProvider, CustomStringConvertible {
    /// As Mistral's docs give it, `/v1` included.
    static let defaultBaseURL = "https://api.mistral.ai/v1"

    var kind: ProviderKind { .mistral }
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
    var description: String { "MistralProvider(\(baseURL))" }

    var endpoint: String { ProviderTransport.endpoint(baseURL, "/chat/completions") }

    /// Mistral's batch jobs, over the same transport, key and base URL as live calls.
    var batches: (any BatchAPI)? {
        MistralBatches(baseURL: baseURL, exchange: BatchExchange(transport: transport, headers: headers))
    }

    var headers: [(name: String, value: String)] { OpenAIProvider.headers(apiKey: apiKey) }

    /// OpenAI's chat completion as a live call sends it: `max_tokens`, a batched prompt's shape as
    /// `response_format` (`json_schema`, which Mistral takes in OpenAI's spelling), nothing else.
    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        try ProviderTransport.encode(OpenAIProvider.chatRequest(for: request, lane: .live))
    }

    static func parseResponse(_ body: Data, for request: CompletionRequest, redactor: Redactor)
        throws(ProviderError) -> CompletionResponse
    {
        try OpenAIProvider.parseResponse(body, for: request, redactor: redactor)
    }
}
