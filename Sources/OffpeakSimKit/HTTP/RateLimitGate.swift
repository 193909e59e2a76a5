import Foundation
import Hummingbird

/// The rate limiter as the completion routes meet it: what a call costs, the 429 a call over a
/// limit gets, and the limit headers every answer of the endpoint carries.
struct RateLimitGate: Sendable {
    let state: SimState

    /// Whether any limit is set; without one, calls are never refused and carry no headers.
    var isActive: Bool { !state.limiter.limits.isEmpty }

    /// Admits `call` and reserves its cost, or counts the refusal and returns the 429 to send.
    func admit(_ call: ParsedCall, api: some CompletionAPI) -> Result<RateTicket, SimAPIError> {
        let cacheRead = state.cacheBook.wouldRead(
            api: api.cacheAPI, model: call.model, inputTokens: call.conversation.inputTokens,
            prefix: api.cacheablePrefix(of: call.conversation))
        let cost = RateCost(
            inputTokens: api.inputTokensForLimits(call, cacheRead: cacheRead), maxOutputTokens: call.maxTokens
        )
        switch state.limiter.admit(api.endpoint, cost: cost) {
        case .admitted(let ticket):
            return .success(ticket)
        case .refused(let refusal):
            state.load.recordRateLimited(refusal.kind)
            return .failure(
                SimAPIError(
                    .rateLimited, refusal.message, retryAfter: refusal.retryAfterSeconds, limit: refusal.kind)
            )
        }
    }

    /// Gives back the output tokens the call reserved and did not produce.
    func settle(_ ticket: RateTicket, outputTokens: Int) {
        state.limiter.settle(ticket, outputTokens: outputTokens)
    }

    /// Adds the endpoint's limit headers, as they stand now, to `response`.
    func addHeaders(to response: inout Response, api: some CompletionAPI) {
        guard isActive else { return }
        let report = state.limiter.report(api.endpoint)
        // Hummingbird re-exports HTTPFields but not HTTPField: reach it as the collection's element.
        typealias Field = HTTPFields.Element
        for (name, value) in api.limitHeaders(report, at: Date()) {
            if let field = Field.Name(name) { response.headers.append(Field(name: field, value: value)) }
        }
    }
}
