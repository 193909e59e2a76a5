import Foundation
import Hummingbird

/// Mistral's chat completions: `POST /mistral/v1/chat/completions` (base URL
/// `http://127.0.0.1:8089/mistral/v1`; not at the root, where OpenAI's are), OpenAI's shape with
/// Mistral's differences: a field it does not know is refused with a 422 (`extra_forbidden`), as
/// Mistral refuses OpenAI's `service_tier`, `max_completion_tokens` or `web_search_options`; usage
/// has no cached part (Mistral reports none); no `service_tier` in the answer; errors carry their
/// message at the top of the body.
struct MistralRoutes: CompletionAPI {
    var endpoint: SimEndpoint { .mistral }
    var cacheAPI: PromptCacheBook.API { .openAI }
    private var openAI: OpenAIRoutes { OpenAIRoutes() }

    /// The fields Mistral's chat completions take (docs.mistral.ai, the API's reference).
    static let fields: Set<String> = [
        "model", "messages", "temperature", "top_p", "max_tokens", "stream", "stop", "random_seed",
        "response_format", "tools", "tool_choice", "presence_penalty", "frequency_penalty", "n", "prediction",
        "parallel_tool_calls", "prompt_mode", "safe_prompt", "metadata",
    ]

    func register(on router: Router<some RequestContext>, pipeline: CompletionPipeline) {
        router.post("/mistral/v1/chat/completions") { request, _ in
            await pipeline.respond(to: request, api: self)
        }
    }

    func presentedKey(in headers: HTTPFields) -> String? { openAI.presentedKey(in: headers) }

    func parse(_ body: Data) throws -> ParsedCall {
        let object = try BatchHTTP.object(body, what: "body")
        if let extra = object.keys.filter({ !Self.fields.contains($0) }).sorted().first {
            throw SimAPIError(
                .unknownField,
                #"[{"type":"extra_forbidden","loc":["body","\#(extra)"],"msg":"Extra inputs are not permitted"}]"#
            )
        }
        return try openAI.parse(body)
    }

    /// Nothing cached: every prompt token is billed as input.
    func cacheablePrefix(of conversation: SimConversation) -> CacheablePrefix? { nil }

    func answerBody(for call: ParsedCall, answer: SimAnswer, billing: InputBilling, at made: Date)
        -> ByteBuffer
    {
        var response = ChatCompletionResponse(
            id: randomHex(bytes: 16), created: Int(made.timeIntervalSince1970), model: call.model,
            answer: answer, billing: billing)
        response.serviceTier = nil
        response.usage.promptTokensDetails = nil
        return JSONBody.encode(response)
    }

    func errorResponse(_ error: SimAPIError) -> Response { error.mistralResponse() }

    func inputTokensForLimits(_ call: ParsedCall, cacheRead: Int) -> Int { call.conversation.inputTokens }

    /// Mistral sends no rate-limit headers the clients read; past a limit it answers 429.
    func limitHeaders(_ report: RateLimitReport, at wallNow: Date) -> [(name: String, value: String)] { [] }
}
