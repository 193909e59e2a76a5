import Foundation
import Hummingbird

/// The Anthropic Messages API: `POST /v1/messages`, keyed by `x-api-key`, with explicit
/// `cache_control` prompt caching (cache tokens reported beside `input_tokens`).
struct AnthropicRoutes: CompletionAPI {
    var endpoint: SimEndpoint { .messages }
    var cacheAPI: PromptCacheBook.API { .anthropic }

    func register(on router: Router<some RequestContext>, pipeline: CompletionPipeline) {
        router.post("/v1/messages") { request, _ in
            await pipeline.respond(to: request, api: self)
        }
    }

    func presentedKey(in headers: HTTPFields) -> String? {
        headers.value(named: "x-api-key")
    }

    func parse(_ body: Data) throws -> ParsedCall {
        let request = try JSONBody.decode(AnthropicRequest.self, from: body)
        let (conversation, maxTokens, form) = try request.validated()
        var call = ParsedCall(
            model: request.model, conversation: conversation, maxTokens: maxTokens, form: form)
        if let tool = try SimWebSearchTool.anthropic(in: request.tools) {
            call.searches = SimWebSearch.searches(for: conversation, maxUses: tool.maxUses)
        }
        return call
    }

    func cacheablePrefix(of conversation: SimConversation) -> CacheablePrefix? {
        conversation.markedSystemPrefix
    }

    func answerBody(for call: ParsedCall, answer: SimAnswer, billing: InputBilling, at made: Date)
        -> ByteBuffer
    {
        JSONBody.encode(
            AnthropicResponse(
                id: "msg_sim_" + randomHex(), model: call.model, answer: answer, billing: billing,
                form: call.form, searches: call.searches))
    }

    func errorResponse(_ error: SimAPIError) -> Response {
        error.anthropicResponse()
    }

    /// Cache reads do not count toward Anthropic's input-token limit (current models); cache
    /// writes and uncached input do.
    func inputTokensForLimits(_ call: ParsedCall, cacheRead: Int) -> Int {
        call.conversation.inputTokens - cacheRead
    }

    func limitHeaders(_ report: RateLimitReport, at wallNow: Date) -> [(name: String, value: String)] {
        RateLimitHeaders.anthropic(report, at: wallNow)
    }
}
