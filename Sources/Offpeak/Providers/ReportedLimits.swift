import Foundation

/// What the provider last said is left of its limits, less what offpeak has sent since, so the
/// last call that fits is the last one sent, rather than the first one refused.
///
/// A report is the provider's count when it took the call that carried it: calls offpeak sent
/// after that one are not in it, so they are taken off; calls sent before it are. A report from a
/// call older than the one already heard from is stale and ignored. What is left runs out at the
/// reset the provider named; after that the provider's own count starts again and the report is
/// dropped.
struct ReportedLimits: Sendable {
    struct Left: Sendable, Equatable {
        var remaining: Int
        let resetsAt: Date
    }

    private(set) var requests: Left?
    /// Every kind of token; a call needs its estimate of these.
    private(set) var tokens: Left?
    /// Anthropic's input and output limits: a call waits only when one is used up, since how a
    /// call's estimate splits between them is not known.
    private(set) var inputTokens: Left?
    private(set) var outputTokens: Left?
    /// The per-minute limits the provider reported (its `limit` headers).
    private(set) var requestsPerMinute: Int?
    private(set) var tokensPerMinute: Int?
    /// The call whose answer the report came from.
    private var reportedBy = -1

    /// Takes in a report.
    /// - Parameters:
    ///   - headers: the report.
    ///   - ticket: the call whose answer carried it.
    ///   - sentSince: calls and estimated tokens offpeak sent after `ticket` and still in flight.
    ///   - now: when it arrived; a report without a reset is read as reset a minute later.
    mutating func update(
        _ headers: RateLimitHeaders, from ticket: Int, sentSince: (requests: Int, tokens: Int), now: Date
    ) {
        guard ticket > reportedBy else { return }
        reportedBy = ticket
        func left(_ allowance: RateLimitHeaders.Allowance?, less sent: Int) -> Left? {
            guard let remaining = allowance?.remaining else { return nil }
            let resetsAt = allowance?.resetsAt ?? now.addingTimeInterval(MinuteWindow.length)
            return resetsAt > now ? Left(remaining: remaining - sent, resetsAt: resetsAt) : nil
        }
        requests = left(headers.requests, less: sentSince.requests)
        tokens = left(headers.tokens, less: sentSince.tokens)
        inputTokens = left(headers.inputTokens, less: 0)
        outputTokens = left(headers.outputTokens, less: 0)
        requestsPerMinute = headers.requests?.limit.flatMap { $0 > 0 ? $0 : nil } ?? requestsPerMinute
        tokensPerMinute = headers.tokens?.limit.flatMap { $0 > 0 ? $0 : nil } ?? tokensPerMinute
    }

    /// Drops what has reset by `now`.
    mutating func expire(now: Date) {
        func live(_ left: Left?) -> Left? { left.flatMap { $0.resetsAt > now ? $0 : nil } }
        requests = live(requests)
        tokens = live(tokens)
        inputTokens = live(inputTokens)
        outputTokens = live(outputTokens)
    }

    /// When a call needing `needed` tokens fits what is left, and which limit holds it; nil when
    /// it fits now. Call `expire(now:)` first.
    func wait(tokens needed: Int) -> (until: Date, because: CallLimiter.WaitReason)? {
        var latest: (until: Date, because: CallLimiter.WaitReason)?
        func hold(_ left: Left?, short: (Int) -> Bool, _ reason: CallLimiter.WaitReason) {
            guard let left, short(left.remaining), latest.map({ left.resetsAt > $0.until }) ?? true else {
                return
            }
            latest = (left.resetsAt, reason)
        }
        hold(requests, short: { $0 < 1 }, .requestsPerMinute)
        hold(tokens, short: { $0 < max(1, needed) }, .tokensPerMinute)
        hold(inputTokens, short: { $0 < 1 }, .tokensPerMinute)
        hold(outputTokens, short: { $0 < 1 }, .tokensPerMinute)
        return latest
    }

    /// A call was sent: one request and its tokens fewer are left.
    mutating func take(tokens: Int) {
        requests?.remaining -= 1
        self.tokens?.remaining -= tokens
    }

    /// Call `ticket` was admitted and then not sent: if the report counted on it, its request
    /// and tokens are left after all.
    mutating func giveBack(ticket: Int, tokens: Int) {
        guard ticket > reportedBy else { return }
        requests?.remaining += 1
        self.tokens?.remaining += tokens
    }
}
