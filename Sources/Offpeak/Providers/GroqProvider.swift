import Foundation

/// Groq's API: OpenAI's chat completions under `/openai/v1`, and OpenAI's files and batches API at
/// the same base for its Batch API (`OpenAIBatches`): batches that stand for `/v1/chat/completions`,
/// 25% off. Its Llama models take JSON mode (`json_object`) and no schema, so a batched prompt asks
/// for its shape that way, live and in a batch.
typealias GroqProvider = ChatCompletionsProvider<Groq>

enum Groq: ChatCompletionsDialect {
    static let name = "GroqProvider"
    static var kind: ProviderKind { .groq }
    /// As Groq's docs give it, `/openai/v1` included.
    static let defaultBaseURL = "https://api.groq.com/openai/v1"

    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        try OpenAIProvider.jsonModeBody(for: request)
    }

    /// OpenAI's Batch API, its lines shaped as the live calls are.
    static func batches(baseURL: String, exchange: BatchExchange) -> (any BatchAPI)? {
        var batches = OpenAIBatches(baseURL: baseURL, exchange: exchange)
        batches.chatBody = { request throws(ProviderError) in try requestBody(for: request) }
        return batches
    }
}
