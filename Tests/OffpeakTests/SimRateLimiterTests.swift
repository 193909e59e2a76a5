import Foundation
import Testing

@testable import OffpeakSimKit

/// The rate limiter as a token bucket on a clock the tests drive, and the headers it renders.
struct SimRateLimiterTests {
    let start = ContinuousClock.now
    let oneCall = RateCost(inputTokens: 100, maxOutputTokens: 50)

    private func refusal(_ decision: RateDecision) -> RateRefusal? {
        if case .refused(let refusal) = decision { return refusal }
        return nil
    }

    private func ticket(_ decision: RateDecision) -> RateTicket? {
        if case .admitted(let ticket) = decision { return ticket }
        return nil
    }

    @Test func admitsAMinutesAllowanceAtOnceThenRefusesWithTheWait() throws {
        let limiter = RateLimiter(limits: RateLimits(requestsPerMinute: 3), now: start)
        for _ in 0..<3 {
            #expect(ticket(limiter.admit(.messages, cost: oneCall, now: start)) != nil)
        }
        let refused = try #require(refusal(limiter.admit(.messages, cost: oneCall, now: start)))
        #expect(refused.kind == .requests)
        #expect(refused.limit == 3)
        #expect(abs(refused.secondsUntilAdmitted - 20) < 1e-9, "3 a minute refill one every 20 s")
        #expect(refused.retryAfterSeconds == 20)
        // A refused call takes nothing: the wait does not grow with the refusals.
        let again = try #require(refusal(limiter.admit(.messages, cost: oneCall, now: start)))
        #expect(abs(again.secondsUntilAdmitted - 20) < 1e-9)
        // Each endpoint has its own buckets.
        #expect(ticket(limiter.admit(.chatCompletions, cost: oneCall, now: start)) != nil)
    }

    @Test func refillsContinuouslyUpToTheLimit() throws {
        let limiter = RateLimiter(limits: RateLimits(requestsPerMinute: 60), now: start)
        for _ in 0..<60 { _ = limiter.admit(.messages, cost: oneCall, now: start) }
        #expect(limiter.report(.messages, now: start).states[.requests]?.remaining == 0)
        let early = try #require(
            refusal(limiter.admit(.messages, cost: oneCall, now: start + .milliseconds(400))))
        #expect(abs(early.secondsUntilAdmitted - 0.6) < 1e-9)
        #expect(early.retryAfterSeconds == 1, "whole seconds, rounded up")
        #expect(ticket(limiter.admit(.messages, cost: oneCall, now: start + .seconds(1))) != nil)
        let later = limiter.report(.messages, now: start + .seconds(31))
        #expect(later.states[.requests]?.remaining == 30)
        #expect(later.states[.requests].map { abs($0.secondsUntilFull - 30) < 1e-9 } == true)
        // Never above the limit, however long the wait.
        let full = limiter.report(.messages, now: start + .seconds(3600))
        #expect(full.states[.requests] == RateLimitState(limit: 60, remaining: 60, secondsUntilFull: 0))
    }

    @Test func outputTokensAreReservedFromMaxTokensAndTheUnusedPartGivenBack() throws {
        let limits = RateLimits(outputTokensPerMinute: 1000, tokensPerMinute: 5000)
        let limiter = RateLimiter(limits: limits, now: start)
        let cost = RateCost(inputTokens: 2000, maxOutputTokens: 600)
        let first = try #require(ticket(limiter.admit(.messages, cost: cost, now: start)))
        #expect(limiter.report(.messages, now: start).states[.outputTokens]?.remaining == 400)
        #expect(limiter.report(.messages, now: start).states[.tokens]?.remaining == 2400)
        let refused = try #require(refusal(limiter.admit(.messages, cost: cost, now: start)))
        // Output waits 200 tokens at 16.7 a second (12 s), tokens 200 at 83.3 a second (2.4 s).
        #expect(refused.kind == .outputTokens)
        #expect(refused.requested == 600)
        #expect(abs(refused.secondsUntilAdmitted - 12) < 1e-9)
        limiter.settle(first, outputTokens: 100, now: start)
        let after = limiter.report(.messages, now: start)
        #expect(after.states[.outputTokens]?.remaining == 900)
        #expect(after.states[.tokens]?.remaining == 2900)
        #expect(ticket(limiter.admit(.messages, cost: cost, now: start)) != nil)
    }

    @Test func aCallLargerThanTheWholeLimitIsNeverAdmitted() throws {
        let limiter = RateLimiter(limits: RateLimits(inputTokensPerMinute: 1000), now: start)
        let huge = RateCost(inputTokens: 1001, maxOutputTokens: 1)
        let refused = try #require(refusal(limiter.admit(.messages, cost: huge, now: start + .seconds(600))))
        #expect(refused.neverFits)
        #expect(refused.retryAfterSeconds == 60)
        #expect(
            refused.message
                == "offpeak-sim: this request needs 1001 input tokens, more than the whole rate limit of "
                + "1000 input tokens per minute (offpeak-sim --input-tpm); it can never be admitted")
        #expect(limiter.report(.messages, now: start).states[.inputTokens]?.remaining == 1000)
    }

    @Test func withoutLimitsEveryCallIsAdmittedAndNothingIsReported() {
        let limiter = RateLimiter(limits: .none, now: start)
        for _ in 0..<1000 { #expect(ticket(limiter.admit(.messages, cost: oneCall, now: start)) != nil) }
        #expect(limiter.report(.messages, now: start) == RateLimitReport())
        #expect(RateLimits.none.isEmpty)
        #expect(!RateLimits(tokensPerMinute: 5).isEmpty)
    }

    @Test func resetRefillsEveryBucket() {
        let limiter = RateLimiter(limits: RateLimits(requestsPerMinute: 1), now: start)
        _ = limiter.admit(.messages, cost: oneCall, now: start)
        #expect(refusal(limiter.admit(.messages, cost: oneCall, now: start)) != nil)
        limiter.reset(now: start)
        #expect(ticket(limiter.admit(.messages, cost: oneCall, now: start)) != nil)
    }

    @Test func anthropicHeadersUseRFC3339ResetsAndRoundTokensToThousands() {
        var report = RateLimitReport()
        report.states[.requests] = RateLimitState(limit: 50, remaining: 49, secondsUntilFull: 1.2)
        report.states[.inputTokens] = RateLimitState(limit: 40000, remaining: 38_700, secondsUntilFull: 1.95)
        report.states[.outputTokens] = RateLimitState(limit: 8000, remaining: 7_499, secondsUntilFull: 3.75)
        let now = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
        let headers = RateLimitHeaders.anthropic(report, at: now)
        #expect(
            headers.map(\.name) == [
                "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
                "anthropic-ratelimit-requests-reset", "anthropic-ratelimit-input-tokens-limit",
                "anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset",
                "anthropic-ratelimit-output-tokens-limit", "anthropic-ratelimit-output-tokens-remaining",
                "anthropic-ratelimit-output-tokens-reset", "anthropic-ratelimit-tokens-limit",
                "anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset",
            ])
        #expect(
            headers.map(\.value) == [
                "50", "49", "2026-01-01T00:00:02Z", "40000", "39000", "2026-01-01T00:00:02Z",
                "8000", "7000", "2026-01-01T00:00:04Z", "48000", "46000", "2026-01-01T00:00:04Z",
            ])
    }

    @Test func openAIHeadersUseGoDurations() {
        var report = RateLimitReport()
        report.states[.requests] = RateLimitState(limit: 50, remaining: 48, secondsUntilFull: 2.4)
        report.states[.tokens] = RateLimitState(limit: 40000, remaining: 18_000, secondsUntilFull: 33)
        let headers = RateLimitHeaders.openAI(report)
        #expect(
            headers.map(\.name) == [
                "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests",
                "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens",
            ])
        #expect(headers.map(\.value) == ["50", "48", "2.4s", "40000", "18000", "33s"])
        // Without --tpm the tighter of the input and output limits stands for OpenAI's one.
        var split = RateLimitReport()
        split.states[.inputTokens] = RateLimitState(limit: 1000, remaining: 900, secondsUntilFull: 6)
        split.states[.outputTokens] = RateLimitState(limit: 100, remaining: 10, secondsUntilFull: 54)
        #expect(RateLimitHeaders.openAI(split).map(\.value) == ["100", "10", "54s"])
    }

    @Test(arguments: [
        (0.0, "0s"), (0.0004, "1ms"), (0.02, "20ms"), (1, "1s"), (1.2, "1.2s"), (17.28, "17.28s"),
        (360, "6m0s"), (179.56, "2m59.56s"), (3723.5, "1h2m3.5s"),
    ])
    func goDurationsReadAsOpenAIWritesThem(seconds: Double, text: String) {
        #expect(RateLimitHeaders.goDuration(seconds: seconds) == text)
    }

    @Test func loadCountersKeepTheHighWaterMark() {
        let load = LoadCounters()
        load.enter()
        load.enter()
        load.enter()
        load.leave()
        load.enter()
        load.leave()
        load.recordRateLimited(.requests)
        load.recordRateLimited(.tokens)
        var snapshot = load.snapshot()
        #expect(snapshot.inFlight == 2)
        #expect(snapshot.maxInFlight == 3)
        #expect(snapshot.rateLimited == 2)
        #expect(
            snapshot.rateLimitedBy == ["requests": 1, "input_tokens": 0, "output_tokens": 0, "tokens": 1])
        load.reset()
        snapshot = load.snapshot()
        #expect(snapshot.rateLimited == 0)
        #expect(snapshot.maxInFlight == 2, "calls still in flight stay counted")
        load.leave()
        load.leave()
        #expect(load.snapshot().inFlight == 0)
    }
}
