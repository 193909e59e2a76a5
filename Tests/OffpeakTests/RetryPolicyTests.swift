import Foundation
import Testing

@testable import Offpeak
@testable import OffpeakSimKit  // SplitMix64: seeded, so jitter is reproducible

struct RetryPolicyTests {
    let policy = RetryPolicy(maxRetries: 3, baseDelay: 0.5, maxDelay: 30, maxRetryAfter: 60)

    func decide(
        _ error: ProviderError, code: String? = nil, retryAfter: String? = nil, attempt: Int = 0,
        now: Date = Date()
    ) -> RetryDecision {
        var random = SplitMix64(seed: 42)
        return policy.decision(
            for: error, errorCode: code, retryAfterHeader: retryAfter, attempt: attempt, now: now,
            random: &random)
    }

    func isRetry(_ decision: RetryDecision) -> Bool {
        if case .retry = decision { return true }
        return false
    }

    @Test(arguments: [429, 500, 502, 503, 504, 529])
    func retriesBusyAndBrokenStatuses(status: Int) {
        #expect(isRetry(decide(.http(status: status, message: "busy"))))
    }

    @Test(arguments: [400, 401, 403, 404, 408, 413, 422, 501, 505])
    func neverRetriesOtherStatuses(status: Int) {
        #expect(decide(.http(status: status, message: "no")) == .giveUp)
    }

    @Test func retriesTransportFailuresButNotBadAnswers() {
        #expect(isRetry(decide(.unreachable("refused"))))
        #expect(isRetry(decide(.timeout(seconds: 120))))
        #expect(isRetry(decide(.truncated("cut"))))
        #expect(decide(.badResponse("not JSON")) == .giveUp)
        #expect(decide(.missingKey(variable: "ANTHROPIC_API_KEY")) == .giveUp)
    }

    @Test func retryAfterSecondsIsObeyed() {
        #expect(decide(.http(status: 429, message: "slow down"), retryAfter: "7") == .retry(after: 7))
        #expect(decide(.http(status: 529, message: "overloaded"), retryAfter: " 2 ") == .retry(after: 2))
    }

    @Test func retryAfterHTTPDateIsObeyed() throws {
        let now = try #require(ISO8601DateFormatter().date(from: "2015-10-21T07:27:45Z"))
        let decision = decide(
            .http(status: 429, message: "slow down"), retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT", now: now)
        #expect(decision == .retry(after: 15))
        let past = decide(
            .http(status: 429, message: "x"), retryAfter: "Wed, 21 Oct 2015 07:00:00 GMT", now: now)
        #expect(past == .retry(after: 0))
    }

    @Test func tooLongRetryAfterGivesUp() {
        #expect(decide(.http(status: 429, message: "later"), retryAfter: "3600") == .giveUp)
    }

    @Test func missingOrUnreadableRetryAfterBacksOff() {
        for header in [nil, "soon"] {
            guard case .retry(let wait) = decide(.http(status: 429, message: "x"), retryAfter: header) else {
                Issue.record("expected a retry")
                continue
            }
            #expect(wait >= 0 && wait <= 0.5)
        }
    }

    @Test func spendLimit429IsNotRetried() {
        #expect(
            decide(.http(status: 429, message: "You exceeded your current quota"), code: "insufficient_quota")
                == .giveUp)
        #expect(decide(.http(status: 429, message: "Please check your plan and billing details")) == .giveUp)
        #expect(decide(.http(status: 429, message: "Your credit balance is too low")) == .giveUp)
        #expect(
            decide(.http(status: 429, message: "Workspace spend limit reached"), retryAfter: "1") == .giveUp)
        #expect(
            isRetry(decide(.http(status: 429, message: "Rate limit reached"), code: "rate_limit_exceeded")))
    }

    @Test func givesUpAfterMaxRetries() {
        #expect(isRetry(decide(.http(status: 503, message: "x"), attempt: 2)))
        #expect(decide(.http(status: 503, message: "x"), attempt: 3) == .giveUp)
        #expect(decide(.http(status: 429, message: "x"), retryAfter: "1", attempt: 3) == .giveUp)
        var random = SplitMix64(seed: 1)
        let none = RetryPolicy(maxRetries: 0)
        #expect(none.decision(for: .timeout(seconds: 1), attempt: 0, random: &random) == .giveUp)
    }

    @Test func jitterStaysUnderTheCappedCeiling() {
        var random = SplitMix64(seed: 7)
        for attempt in 0..<12 {
            let ceiling = min(30, 0.5 * pow(2, Double(attempt)))
            var waits: [Double] = []
            for _ in 0..<200 { waits.append(policy.backoff(attempt: attempt, random: &random)) }
            #expect(waits.allSatisfy { $0 >= 0 && $0 <= ceiling })
            // Full jitter spreads over the whole range, not just near the ceiling.
            #expect(waits.contains { $0 < ceiling / 4 } && waits.contains { $0 > ceiling * 3 / 4 })
        }
    }

    @Test func seededJitterIsReproducible() {
        var first = SplitMix64(seed: 99)
        var second = SplitMix64(seed: 99)
        #expect(policy.backoff(attempt: 3, random: &first) == policy.backoff(attempt: 3, random: &second))
    }
}
