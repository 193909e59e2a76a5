import Foundation

/// DeepSeek's API: OpenAI's chat completions with its own usage fields (`prompt_cache_hit_tokens`,
/// `prompt_cache_miss_tokens`, read by `OpenAIProvider.parseResponse`) and its own JSON output
/// mode: `response_format: {"type": "json_object"}`, no schema. No batch API.
typealias DeepSeekProvider = ChatCompletionsProvider<DeepSeek>

enum DeepSeek: ChatCompletionsDialect {
    static let name = "DeepSeekProvider"
    static var kind: ProviderKind { .deepseek }
    /// As DeepSeek's docs give it; `/v1` is accepted too, and `/chat/completions` follows either.
    static let defaultBaseURL = "https://api.deepseek.com"

    /// OpenAI's chat completion, its answer shape asked for as DeepSeek's JSON output mode takes it.
    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        try OpenAIProvider.jsonModeBody(for: request)
    }

    static func batches(baseURL: String, exchange: BatchExchange) -> (any BatchAPI)? { nil }
}
