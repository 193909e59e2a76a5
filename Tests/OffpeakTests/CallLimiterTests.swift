import Foundation
import Testing

@testable import Offpeak

/// Whether one more call may start within requests and tokens per minute (configured, and as the
/// provider's headers report them) and `retry-after`. Every time is passed in: nothing sleeps.
struct CallLimiterTests: LimiterTesting {
    typealias Allowance = RateLimitHeaders.Allowance
    let t0 = Date(timeIntervalSince1970: 1_755_780_000)

    @Test func theFiftyFirstCallOfAMinuteWaits() throws {
        let limiter = CallLimiter(inFlight: 100, requestsPerMinute: 50)
        for second in 0..<50 {
            let ticket = try go(limiter, at: t0 + Double(second))
            finish(limiter, ticket, at: t0 + Double(second) + 0.5)
        }
        #expect(
            try limiter.admit(estimatedTokens: 0, now: t0 + 50)
                == .wait(until: t0 + 60, because: .requestsPerMinute))
        _ = try go(limiter, at: t0 + 60)
        #expect(
            try limiter.admit(estimatedTokens: 0, now: t0 + 60)
                == .wait(until: t0 + 61, because: .requestsPerMinute))
    }

    /// Tokens per minute count each call's estimate; what it used replaces the estimate; a call
    /// larger than the whole limit waits for an empty minute, then goes.
    @Test func tokensPerMinuteCountTheEstimates() throws {
        let limiter = CallLimiter(inFlight: 100, tokensPerMinute: 40_000)
        let first = try go(limiter, tokens: 30_000, at: t0)
        #expect(
            try limiter.admit(estimatedTokens: 15_000, now: t0 + 1)
                == .wait(until: t0 + 60, because: .tokensPerMinute))
        let second = try go(limiter, tokens: 10_000, at: t0 + 1)
        limiter.finished(first, outcome: .answered, headers: .none, now: t0 + 2, usedTokens: 4_000)
        _ = try go(limiter, tokens: 15_000, at: t0 + 2)  // 4,000 + 10,000 + 15,000
        finish(limiter, second, at: t0 + 3)
        #expect(
            try limiter.admit(estimatedTokens: 90_000, now: t0 + 3)
                == .wait(until: t0 + 62, because: .tokensPerMinute))
        _ = try go(limiter, tokens: 90_000, at: t0 + 62)
    }

    /// The provider says none are left until a reset 20 s away: the next call waits 20 s, not
    /// for a 429. The same for tokens, with the call's estimate.
    @Test(
        arguments: [
            (
                [
                    "anthropic-ratelimit-requests-remaining": "0",
                    "anthropic-ratelimit-requests-reset": "2025-08-21T12:40:21Z",
                ],
                CallLimiter.WaitReason.requestsPerMinute
            ),
            (
                ["x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "20s"],
                .requestsPerMinute
            ),
            (
                [
                    "anthropic-ratelimit-tokens-remaining": "1000",
                    "anthropic-ratelimit-tokens-reset": "2025-08-21T12:40:21Z",
                ],
                .tokensPerMinute
            ),
            (["x-ratelimit-remaining-tokens": "1500", "x-ratelimit-reset-tokens": "20s"], .tokensPerMinute),
            (
                [
                    "anthropic-ratelimit-output-tokens-remaining": "0",
                    "anthropic-ratelimit-output-tokens-reset": "2025-08-21T12:40:21Z",
                ],
                .tokensPerMinute
            ),
        ] as [([String: String], CallLimiter.WaitReason)])
    func nothingLeftUntilAResetWaitsForIt(headers: [String: String], reason: CallLimiter.WaitReason) throws {
        let limiter = CallLimiter(inFlight: 8)
        let ticket = try go(limiter, tokens: 500, at: t0)
        let arrived = t0 + 1
        finish(limiter, ticket, headers: RateLimitHeaders(headers: headers, receivedAt: arrived), at: arrived)
        #expect(
            try limiter.admit(estimatedTokens: 2_000, now: arrived) == .wait(until: t0 + 21, because: reason))
        _ = try go(limiter, tokens: 2_000, at: t0 + 21)
    }

    /// What is left is what the report said less the calls sent since; calls sent after the
    /// reporting one are not in its count; an older call's report is stale.
    @Test func reportsCountCallsSentSince() throws {
        let limiter = CallLimiter(inFlight: 8)
        let reset = t0 + 30
        func left(_ remaining: Int) -> RateLimitHeaders {
            RateLimitHeaders(requests: Allowance(limit: 1000, remaining: remaining, resetsAt: reset))
        }
        let a = try go(limiter, at: t0)
        let b = try go(limiter, at: t0)
        let c = try go(limiter, at: t0)
        finish(limiter, c, headers: left(10), at: t0 + 1)
        finish(limiter, a, headers: left(0), at: t0 + 1)  // stale: sent before c
        finish(limiter, b, headers: left(0), at: t0 + 1)  // stale too
        _ = try go(limiter, at: t0 + 1)
        let d = try go(limiter, at: t0 + 1)
        let e = try go(limiter, at: t0 + 1)
        finish(limiter, d, headers: left(1), at: t0 + 2)  // e was sent after d: 1 - 1 = 0 left
        #expect(
            try limiter.admit(estimatedTokens: 0, now: t0 + 2)
                == .wait(until: reset, because: .requestsPerMinute)
        )
        finish(limiter, e, headers: left(3), at: t0 + 3)
        for _ in 0..<3 { _ = try go(limiter, at: t0 + 3) }
        #expect(
            try limiter.admit(estimatedTokens: 0, now: t0 + 3)
                == .wait(until: reset, because: .requestsPerMinute)
        )
    }

    /// A limit the provider reports is kept after its reset, as a per-minute limit of offpeak's
    /// own; the tighter of it and the configured one holds.
    @Test func reportedLimitsAreLearned() throws {
        let limiter = CallLimiter(inFlight: 8, requestsPerMinute: 100)
        let first = try go(limiter, at: t0)
        let headers = RateLimitHeaders(
            headers: [
                "x-ratelimit-limit-requests": "2", "x-ratelimit-remaining-requests": "1",
                "x-ratelimit-reset-requests": "1s",
            ], receivedAt: t0)
        finish(limiter, first, headers: headers, at: t0)
        _ = try go(limiter, at: t0 + 2)
        #expect(
            try limiter.admit(estimatedTokens: 0, now: t0 + 3)
                == .wait(until: t0 + 60, because: .requestsPerMinute))
    }

    /// A 429's `retry-after` holds every new call until then, and the cap is halved.
    @Test func retryAfterPausesNewCalls() throws {
        let limiter = CallLimiter(inFlight: 8)
        let ticket = try go(limiter, at: t0)
        let other = try go(limiter, at: t0)
        let headers = RateLimitHeaders(headers: ["retry-after": "30"], receivedAt: t0 + 1)
        finish(limiter, ticket, .throttled, headers: headers, at: t0 + 1)
        #expect(limiter.inFlightCap == 4)
        #expect(
            try limiter.admit(estimatedTokens: 0, now: t0 + 2) == .wait(until: t0 + 31, because: .retryAfter))
        finish(
            limiter, other, headers: RateLimitHeaders(headers: ["retry-after": "5"], receivedAt: t0 + 2),
            at: t0 + 2)
        #expect(
            try limiter.admit(estimatedTokens: 0, now: t0 + 2) == .wait(until: t0 + 31, because: .retryAfter))
        _ = try go(limiter, at: t0 + 31)
    }

    /// Of several limits that hold a call, the one that holds it longest is named.
    @Test func theLongestWaitIsTheAnswer() throws {
        let limiter = CallLimiter(inFlight: 8, requestsPerMinute: 1)
        let ticket = try go(limiter, at: t0)
        finish(limiter, ticket, .throttled, headers: RateLimitHeaders(retryAt: t0 + 90), at: t0 + 1)
        #expect(
            try limiter.admit(estimatedTokens: 0, now: t0 + 1) == .wait(until: t0 + 90, because: .retryAfter))
        _ = try go(limiter, at: t0 + 90)
    }

    /// Retries made inside one call were requests too.
    @Test func retriesCountAsRequests() throws {
        let limiter = CallLimiter(inFlight: 8, requestsPerMinute: 3)
        let ticket = try go(limiter, at: t0)
        limiter.finished(ticket, outcome: .answered, headers: .none, now: t0 + 1, attempts: 3)
        #expect(
            try limiter.admit(estimatedTokens: 0, now: t0 + 1)
                == .wait(until: t0 + 60, because: .requestsPerMinute))
    }

    /// A call admitted and then not sent gives back its slot and its share of the minute.
    @Test func aWithdrawnCallTakesNothing() throws {
        let limiter = CallLimiter(inFlight: 1, requestsPerMinute: 1, tokensPerMinute: 100)
        let ticket = try go(limiter, tokens: 100, at: t0)
        #expect(try limiter.admit(estimatedTokens: 0, now: t0) == .waitForCall)
        limiter.withdraw(ticket)
        #expect(limiter.inFlight == 0)
        let sent = try go(limiter, tokens: 100, at: t0 + 1)
        limiter.withdraw(sent)
        limiter.withdraw(sent)  // twice is once
        finish(limiter, sent, at: t0 + 2)  // and a finish after it changes nothing
        _ = try go(limiter, tokens: 100, at: t0 + 2)
    }

    /// The default in flight: 8 for a remote API and for offpeak-sim, 1 for another server on
    /// this machine (llama.cpp, Ollama), the configured number whatever the address.

    /// The minute keeps only the last 60 seconds, and finds a call again after old ones are
    /// dropped in bulk.
    @Test func theMinuteForgetsOldCalls() {
        var window = MinuteWindow()
        for ticket in 0..<3_000 { window.record(ticket: ticket, at: t0 + Double(ticket) / 100, tokens: 10) }
        window.forget(before: t0 + 60 + 25)  // calls sent at t0 ... t0 + 25 are gone
        #expect(window.requests == 499 && window.tokens == 4_990)
        window.correct(ticket: 2_999, tokens: 1_000)
        window.correct(ticket: 5, tokens: 1_000)  // gone: nothing to correct
        window.remove(ticket: 2_998)
        #expect(window.requests == 498 && window.tokens == 5_970)
        #expect(window.requestWait(limit: 498) == t0 + 25.01 + 60)
        #expect(window.requestWait(limit: 499) == nil)
        #expect(window.tokenWait(limit: 6_000, needed: 30) == nil)
        #expect(window.tokenWait(limit: 6_000, needed: 40) == t0 + 25.01 + 60)
    }
}
