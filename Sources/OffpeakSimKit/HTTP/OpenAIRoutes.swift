import Foundation
import Hummingbird

/// OpenAI chat completions: `POST /v1/chat/completions`, keyed by `Authorization: Bearer`, with
/// automatic prompt caching of the system text (cached tokens reported inside `prompt_tokens`).
struct OpenAIRoutes: CompletionAPI {
    var endpoint: SimEndpoint { .chatCompletions }
    var cacheAPI: PromptCacheBook.API { .openAI }

    func register(on router: Router<some RequestContext>, pipeline: CompletionPipeline) {
        router.post("/v1/chat/completions") { request, _ in
            await pipeline.respond(to: request, api: self)
        }
    }

    func presentedKey(in headers: HTTPFields) -> String? {
        guard let value = headers[.authorization], value.hasPrefix("Bearer ") else { return nil }
        return String(value.dropFirst("Bearer ".count))
    }

    func parse(_ body: Data) throws -> ParsedCall {
        let request = try JSONBody.decode(ChatCompletionRequest.self, from: body)
        let (conversation, maxTokens, form) = try request.validated()
        var call = ParsedCall(
            model: request.model, conversation: conversation, maxTokens: maxTokens, form: form)
        // A search model searches once a call, and OpenAI bills the call as one search.
        if request.webSearchOptions != nil {
            call.searches = SimWebSearch.searches(for: conversation, maxUses: 1)
        }
        call.flex = request.serviceTier == "flex"
        return call
    }

    func cacheablePrefix(of conversation: SimConversation) -> CacheablePrefix? {
        conversation.systemPrefix
    }

    func answerBody(for call: ParsedCall, answer: SimAnswer, billing: InputBilling, at made: Date)
        -> ByteBuffer
    {
        let response = ChatCompletionResponse(
            id: "chatcmpl-sim" + randomHex(), created: Int(made.timeIntervalSince1970), model: call.model,
            answer: answer, billing: billing, searches: call.searches,
            serviceTier: call.flex && !call.flexAsDefault ? "flex" : "default")
        return JSONBody.encode(response)
    }

    func errorResponse(_ error: SimAPIError) -> Response {
        error.openAIResponse()
    }

    /// OpenAI counts every prompt token, cached or not, toward its token limit.
    func inputTokensForLimits(_ call: ParsedCall, cacheRead: Int) -> Int {
        call.conversation.inputTokens
    }

    func limitHeaders(_ report: RateLimitReport, at wallNow: Date) -> [(name: String, value: String)] {
        RateLimitHeaders.openAI(report)
    }
}
