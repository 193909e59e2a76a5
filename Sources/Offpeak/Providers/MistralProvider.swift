import Foundation

/// Mistral's API: OpenAI's chat completions (`{base}/chat/completions`, base
/// `https://api.mistral.ai/v1`), refusing any field it does not know with a 422, so a call carries
/// only the fields both share; and its batch jobs (`MistralBatches`), at half price.
typealias MistralProvider = ChatCompletionsProvider<Mistral>

enum Mistral: ChatCompletionsDialect {
    static let name = "MistralProvider"
    static var kind: ProviderKind { .mistral }
    /// As Mistral's docs give it, `/v1` included.
    static let defaultBaseURL = "https://api.mistral.ai/v1"

    /// OpenAI's chat completion as a live call sends it: `max_tokens`, a batched prompt's shape as
    /// `response_format` (`json_schema`, which Mistral takes in OpenAI's spelling), nothing else.
    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        try ProviderTransport.encode(OpenAIProvider.chatRequest(for: request, lane: .live))
    }

    static func batches(baseURL: String, exchange: BatchExchange) -> (any BatchAPI)? {
        MistralBatches(baseURL: baseURL, exchange: exchange)
    }
}
