import Foundation
import Hummingbird

/// A completion request both APIs reduce to: who to answer as, what was said, how long at most.
struct ParsedCall: Sendable {
    var model: String
    var conversation: SimConversation
    var maxTokens: Int
    /// How the request asked its answer to be shaped.
    var form: AnswerForm = .text
    /// The web searches the call runs (`SimWebSearch`): none without Anthropic's search tool.
    var searches: [SimWebSearch.Search] = []
    /// The call asked for flex processing (`service_tier: "flex"`, `FlexGate`).
    var flex = false
    /// A flex call taken at the default tier (`FlexGate.answersAsDefault`): answered as a live
    /// call, and its response says `service_tier: "default"`.
    var flexAsDefault = false
    /// Tokens of the explicit context cache the call names (Gemini's `cachedContent`), billed as
    /// cached whatever the implicit cache holds; nil: none named.
    var cachedTokens: Int?

    /// `billing` with the search results' tokens added to its uncached input: the results a search
    /// brings into the conversation are billed as input.
    func withSearchResults(_ billing: InputBilling) -> InputBilling {
        var billing = billing
        billing.uncached += searches.reduce(0) { $0 + $1.results.count * SimWebSearch.tokensPerResult }
        return billing
    }
}

/// What differs between the Anthropic and OpenAI endpoints; `CompletionPipeline` does the rest.
protocol CompletionAPI: Sendable {
    var endpoint: SimEndpoint { get }
    var cacheAPI: PromptCacheBook.API { get }
    /// The API key the request presents, in this API's header.
    func presentedKey(in headers: HTTPFields) -> String?
    /// - Throws: `SimAPIError` for a body the API would refuse.
    func parse(_ body: Data) throws -> ParsedCall
    func cacheablePrefix(of conversation: SimConversation) -> CacheablePrefix?
    /// The answer's body, stamped (where the API stamps one) with `made`, the sim's clock.
    func answerBody(for call: ParsedCall, answer: SimAnswer, billing: InputBilling, at made: Date)
        -> ByteBuffer
    func errorResponse(_ error: SimAPIError) -> Response
    /// The input tokens this API counts against an input or token limit, given how many of the
    /// call's input tokens the prompt cache would serve.
    func inputTokensForLimits(_ call: ParsedCall, cacheRead: Int) -> Int
    /// This API's rate-limit headers for the limits' state at `wallNow`.
    func limitHeaders(_ report: RateLimitReport, at wallNow: Date) -> [(name: String, value: String)]
    /// The price window an answer made at `now` (the sim's clock) is billed in, where this API's
    /// prices change with the clock; nil where they do not.
    func billingWindow(at now: Date) -> String?
}

extension CompletionAPI {
    func billingWindow(at now: Date) -> String? { nil }
}

extension HTTPFields {
    /// A header's value by name, for names swift-http-types has no constant for.
    func value(named name: String) -> String? {
        first { $0.name.canonicalName == name.lowercased() }?.value
    }
}

/// A random hex string for answer ids; ids need only be unique, not repeatable.
func randomHex(bytes: Int = 12) -> String {
    (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
}
