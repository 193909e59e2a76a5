import Foundation
import Synchronization
import Testing

@testable import Offpeak

/// Calls in flight: the configured number or the default for where calls go, halved when the
/// provider pushes back and grown back on answers (AIMD), never exceeded by many threads.
struct InFlightCapTests: LimiterTesting {
    let t0 = Date(timeIntervalSince1970: 1_755_780_000)

    @Test func callsBeyondTheCapWaitForOneToFinish() throws {
        let limiter = CallLimiter(inFlight: 3)
        let tickets = try (0..<3).map { _ in try go(limiter, at: t0) }
        #expect(try limiter.admit(estimatedTokens: 0, now: t0) == .waitForCall)
        finish(limiter, tickets[1], at: t0 + 1)
        _ = try go(limiter, at: t0 + 1)
        #expect(limiter.inFlight == 3)
    }

    /// Each push-back halves the cap, down to 1: 8, 4, 2, 1, 1.
    @Test func pushBackHalvesTheCap() throws {
        let limiter = CallLimiter(inFlight: 8)
        for expected in [4, 2, 1, 1] {
            let ticket = try go(limiter, at: t0)
            finish(limiter, ticket, .throttled, at: t0)
            #expect(limiter.inFlightCap == expected)
        }
    }

    /// Calls already in flight at the cut were sent at the old rate: their 429s are the same
    /// overload and cut once, not once each; a call sent after the cut cuts again.
    @Test func aBurstOfPushBacksCutsOnce() throws {
        let limiter = CallLimiter(inFlight: 8)
        let burst = try (0..<8).map { _ in try go(limiter, at: t0) }
        for ticket in burst { finish(limiter, ticket, .throttled, at: t0 + 1) }
        #expect(limiter.inFlightCap == 4)
        let later = try go(limiter, at: t0 + 2)
        finish(limiter, later, .throttled, at: t0 + 3)
        #expect(limiter.inFlightCap == 2)
    }

    /// From 1, each run of `cap` answers adds one: 1 answer to 2, 2 more to 3, ..., up to the
    /// configured 8 and no further; failures neither cut nor grow.
    @Test func answersGrowTheCapBackOneSlotPerCapAnswers() throws {
        let limiter = CallLimiter(inFlight: 8)
        for _ in 0..<3 {
            let ticket = try go(limiter, at: t0)
            finish(limiter, ticket, .throttled, at: t0)
        }
        #expect(limiter.inFlightCap == 1)
        var before = 1
        for (answers, cap) in [(1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7), (7, 8), (100, 8)] {
            for _ in 0..<answers {
                let ticket = try go(limiter, at: t0)
                finish(limiter, ticket, .failed, at: t0)
                #expect(limiter.inFlightCap == before, "failures do not count")
                let answered = try go(limiter, at: t0)
                finish(limiter, answered, .answered, at: t0)
            }
            #expect(limiter.inFlightCap == cap)
            before = cap
        }
    }

    /// 50 requests a minute: the 51st call of the minute waits until the first is a minute old.

    @Test(
        arguments: [
            (ProviderKind.anthropic, "https://api.anthropic.com", nil, 8),
            (.openai, "https://api.openai.com/v1", nil, 8),
            (.openai, "http://127.0.0.1:8080/v1", nil, 1),
            (.openai, "http://localhost:11434/v1", nil, 1),
            (.anthropic, "http://[::1]:8089", nil, 1),
            (.sim, "http://127.0.0.1:8089", nil, 8),
            (.openai, "http://127.0.0.1:8080/v1", 4, 4),
            (.anthropic, "https://api.anthropic.com", 2, 2),
        ] as [(ProviderKind, String, Int?, Int)])
    func defaultCallsInFlight(provider: ProviderKind, baseURL: String, configured: Int?, expected: Int) throws
    {
        let limits = ProviderLimits(inFlight: configured)
        #expect(limits.inFlight(for: provider, baseURL: baseURL) == expected)
        let limiter = CallLimiter(limits, provider: provider, baseURL: baseURL)
        for _ in 0..<expected { _ = try go(limiter, at: t0) }
        #expect(try limiter.admit(estimatedTokens: 0, now: t0) == .waitForCall)
    }

    @Test(
        arguments: [
            (429, nil, "Number of request tokens has exceeded your per-minute rate limit", true),
            (429, "insufficient_quota", "You exceeded your current quota", false),
            (429, nil, "Your credit balance is too low", false),
            (529, "overloaded_error", "Overloaded", true), (503, nil, "Service Unavailable", true),
            (500, nil, "oops", false), (400, nil, "bad", false),
        ] as [(Int, String?, String, Bool)])
    func whatCountsAsPushBack(status: Int, code: String?, message: String, throttles: Bool) {
        #expect(CallOutcome.throttles(status: status, errorCode: code, message: message) == throttles)
    }

    @Test func aReplysOutcome() {
        let answer = CompletionResponse(text: "x", finishReason: .stop, usage: Usage(), model: "m")
        let busy = ProviderError.http(status: 429, message: "slow down")
        #expect(CallOutcome(CallReply(answer: .success(answer))) == .answered)
        #expect(
            CallOutcome(CallReply(answer: .success(answer), attempts: 2, throttledAttempts: 1)) == .throttled)
        #expect(CallOutcome(CallReply(answer: .failure(busy), throttledAttempts: 1)) == .throttled)
        #expect(CallOutcome(CallReply(answer: .failure(ProviderError.timeout(seconds: 1)))) == .failed)
    }

    /// Many threads admitting and finishing at once never have more calls in flight than the cap.
    @Test func threadsNeverExceedTheCap() {
        let limiter = CallLimiter(inFlight: 5)
        let running = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var sent = 0
            while sent < 500 {
                guard case .go(let ticket) = try? limiter.admit(estimatedTokens: 10, now: t0) else {
                    continue
                }
                let now = running.add(1, ordering: .sequentiallyConsistent).newValue
                most.max(now, ordering: .sequentiallyConsistent)
                running.subtract(1, ordering: .sequentiallyConsistent)
                limiter.finished(ticket, outcome: .answered, headers: .none, now: t0)
                sent += 1
            }
        }
        #expect(most.load(ordering: .sequentiallyConsistent) <= 5)
        #expect(limiter.inFlight == 0)
    }
}
