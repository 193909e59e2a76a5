import Foundation
import Logging

/// Completions through DeepSeek's API, which speaks OpenAI's chat completions
/// (`POST {base}/chat/completions`) with its own usage fields (`prompt_cache_hit_tokens`,
/// `prompt_cache_miss_tokens`, read by `OpenAIProvider.parseResponse`) and its own JSON output
/// mode: `response_format: {"type": "json_object"}`, no schema.
struct DeepSeekProvider: HTTPProvider, CustomStringConvertible {
    /// As DeepSeek's docs give it; `/v1` is accepted too, and `/chat/completions` follows either.
    static let defaultBaseURL = "https://api.deepseek.com"

    var kind: ProviderKind { .deepseek }
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
    var description: String { "DeepSeekProvider(\(baseURL))" }

    var endpoint: String { ProviderTransport.endpoint(baseURL, "/chat/completions") }

    /// DeepSeek has no batch API.
    var batches: (any BatchAPI)? { nil }

    var headers: [(name: String, value: String)] { OpenAIProvider.headers(apiKey: apiKey) }

    /// OpenAI's chat completion, its answer shape asked for as DeepSeek's JSON output mode takes it.
    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        try OpenAIProvider.jsonModeBody(for: request)
    }

    static func parseResponse(_ body: Data, for request: CompletionRequest, redactor: Redactor)
        throws(ProviderError) -> CompletionResponse
    {
        try OpenAIProvider.parseResponse(body, for: request, redactor: redactor)
    }
}
