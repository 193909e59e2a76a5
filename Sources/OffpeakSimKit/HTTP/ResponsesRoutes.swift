import Foundation
import Hummingbird

/// OpenAI's Responses API: `POST /v1/responses`, keyed by `Authorization: Bearer`, as OpenAI
/// documents its newer models first. The input is a string or a list of messages, the system prompt
/// `instructions`, the output limit `max_output_tokens`, a structured answer `text.format`; the
/// answer is an `output` list whose message holds `output_text`, with usage as `input_tokens`
/// (cached ones included, and counted in `input_tokens_details.cached_tokens`) and `output_tokens`
/// (reasoning included: `output_tokens_details.reasoning_tokens`). Automatic prompt caching keys on
/// the instructions, as for chat completions; `store` is read and ignored (nothing is kept).
struct ResponsesRoutes: CompletionAPI {
    var endpoint: SimEndpoint { .responses }
    var cacheAPI: PromptCacheBook.API { .openAI }
    private var openAI: OpenAIRoutes { OpenAIRoutes() }

    func register(on router: Router<some RequestContext>, pipeline: CompletionPipeline) {
        router.post("/v1/responses") { request, _ in
            await pipeline.respond(to: request, api: self)
        }
    }

    func presentedKey(in headers: HTTPFields) -> String? { openAI.presentedKey(in: headers) }

    func parse(_ body: Data) throws -> ParsedCall {
        let request = try JSONBody.decode(ResponsesRequest.self, from: body)
        let (conversation, maxTokens, form) = try request.validated()
        var call = ParsedCall(
            model: request.model, conversation: conversation, maxTokens: maxTokens, form: form)
        call.flex = request.serviceTier == "flex"
        return call
    }

    func cacheablePrefix(of conversation: SimConversation) -> CacheablePrefix? {
        openAI.cacheablePrefix(of: conversation)
    }

    func answerBody(for call: ParsedCall, answer: SimAnswer, billing: InputBilling, at made: Date)
        -> ByteBuffer
    {
        JSONBody.encode(
            ResponsesResponse(
                id: "resp_sim" + randomHex(), createdAt: Int(made.timeIntervalSince1970), model: call.model,
                answer: answer, billing: billing, maxOutputTokens: call.maxTokens,
                serviceTier: call.flex && !call.flexAsDefault ? "flex" : "default"))
    }

    func errorResponse(_ error: SimAPIError) -> Response { error.openAIResponse() }

    func inputTokensForLimits(_ call: ParsedCall, cacheRead: Int) -> Int { call.conversation.inputTokens }

    func limitHeaders(_ report: RateLimitReport, at wallNow: Date) -> [(name: String, value: String)] {
        RateLimitHeaders.openAI(report)
    }
}
