import Foundation
import Hummingbird

/// DeepSeek's chat completions: `POST /deepseek/chat/completions` (base URL
/// `http://127.0.0.1:8089/deepseek`, as DeepSeek's own has no `/v1`; `/deepseek/v1/...` too, as
/// DeepSeek takes both; not at the root, where an OpenAI base URL missing its `/v1` must still
/// get a 404), OpenAI's
/// shape with DeepSeek's differences: usage reports the prompt's cache hits and misses
/// (`prompt_cache_hit_tokens`, `prompt_cache_miss_tokens`) and no `prompt_tokens_details`; its
/// JSON output mode is `json_object` (a `json_schema` format is refused with a 400); its context
/// cache keeps prefixes from 64 tokens; and answers are billed at peak or off-peak prices by the
/// hour they are made on the sim's clock (`DeepSeekHours`), counted in `/sim/stats`'s
/// `billed_by_window`.
struct DeepSeekRoutes: CompletionAPI {
    var endpoint: SimEndpoint { .deepseek }
    var cacheAPI: PromptCacheBook.API { .deepSeek }
    private var openAI: OpenAIRoutes { OpenAIRoutes() }

    func register(on router: Router<some RequestContext>, pipeline: CompletionPipeline) {
        for path in ["/deepseek/chat/completions", "/deepseek/v1/chat/completions"] {
            router.post(RouterPath(path)) { request, _ in
                await pipeline.respond(to: request, api: self)
            }
        }
    }

    func presentedKey(in headers: HTTPFields) -> String? { openAI.presentedKey(in: headers) }

    func parse(_ body: Data) throws -> ParsedCall {
        let request = try JSONBody.decode(ChatCompletionRequest.self, from: body)
        if request.responseFormat?["type"]?.string == "json_schema" {
            throw SimAPIError(.invalidRequest, "This response_format type is unavailable now")
        }
        let call = try openAI.parse(body)
        guard !call.flex else { throw SimAPIError(.invalidRequest, "service_tier: flex is not supported") }
        return call
    }

    func cacheablePrefix(of conversation: SimConversation) -> CacheablePrefix? {
        openAI.cacheablePrefix(of: conversation)
    }

    func answerBody(for call: ParsedCall, answer: SimAnswer, billing: InputBilling, at made: Date)
        -> ByteBuffer
    {
        var response = ChatCompletionResponse(
            id: UUID().uuidString.lowercased(), created: Int(made.timeIntervalSince1970), model: call.model,
            answer: answer, billing: billing)
        response.serviceTier = nil
        response.usage.promptTokensDetails = nil
        response.usage.promptCacheHitTokens = billing.cacheRead
        response.usage.promptCacheMissTokens = billing.total - billing.cacheRead
        return JSONBody.encode(response)
    }

    func errorResponse(_ error: SimAPIError) -> Response { error.openAIResponse() }

    func inputTokensForLimits(_ call: ParsedCall, cacheRead: Int) -> Int { call.conversation.inputTokens }

    /// DeepSeek sends no rate-limit headers: past its concurrency limit it answers 429.
    func limitHeaders(_ report: RateLimitReport, at wallNow: Date) -> [(name: String, value: String)] { [] }

    func billingWindow(at now: Date) -> String? { DeepSeekHours.window(at: now) }
}

/// DeepSeek's price hours, as its pricing page states them: peak 01:00–04:00 and 06:00–10:00 UTC,
/// Monday to Friday; off-peak (half price) every other hour and all weekend. Written here apart from
/// offpeak's price table, so the two are checked against each other.
enum DeepSeekHours {
    static func window(at date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        let parts = calendar.dateComponents([.weekday, .hour], from: date)
        let weekday = (2...6).contains(parts.weekday ?? 1)  // Monday ... Friday
        let hour = parts.hour ?? 0
        let peak = weekday && ((1..<4).contains(hour) || (6..<10).contains(hour))
        return peak ? "peak" : "off-peak"
    }
}
