import Foundation
import Testing

@testable import Offpeak

/// Rate-limit headers as Anthropic and OpenAI send them, read into absolute times; anything
/// missing or garbled is left out, never an error.
struct RateLimitHeadersTests {
    typealias Allowance = RateLimitHeaders.Allowance
    let now = Date(timeIntervalSince1970: 1_755_780_000)  // 2025-08-21T12:40:00Z

    func time(_ text: String) -> Date? { try? Date(text, strategy: Date.ISO8601FormatStyle()) }

    /// The rate-limit headers of a real 200 from api.anthropic.com (recorded 2025-08-21 in the
    /// tidyllm package's test fixtures), which match the documented names and formats.
    @Test func anthropicHeadersOfARealAnswer() {
        let headers = RateLimitHeaders(
            headers: [
                "anthropic-ratelimit-input-tokens-limit": "80000",
                "anthropic-ratelimit-input-tokens-remaining": "80000",
                "anthropic-ratelimit-input-tokens-reset": "2025-08-21T12:40:59Z",
                "anthropic-ratelimit-output-tokens-limit": "16000",
                "anthropic-ratelimit-output-tokens-remaining": "16000",
                "anthropic-ratelimit-output-tokens-reset": "2025-08-21T12:41:00Z",
                "anthropic-ratelimit-requests-limit": "1000", "anthropic-ratelimit-requests-remaining": "999",
                "anthropic-ratelimit-requests-reset": "2025-08-21T12:40:59Z",
                "anthropic-ratelimit-tokens-limit": "96000", "anthropic-ratelimit-tokens-remaining": "96000",
                "anthropic-ratelimit-tokens-reset": "2025-08-21T12:40:59Z",
                "request-id": "req_011CSLsW7mFqvHHnzrKdKjAE", "content-type": "application/json",
            ], receivedAt: now)
        let reset = time("2025-08-21T12:40:59Z")
        #expect(headers.requests == Allowance(limit: 1000, remaining: 999, resetsAt: reset))
        #expect(headers.tokens == Allowance(limit: 96000, remaining: 96000, resetsAt: reset))
        #expect(headers.inputTokens == Allowance(limit: 80000, remaining: 80000, resetsAt: reset))
        #expect(
            headers.outputTokens
                == Allowance(limit: 16000, remaining: 16000, resetsAt: time("2025-08-21T12:41:00Z")))
        #expect(headers.retryAt == nil)
    }

    /// The sample table of OpenAI's rate-limit guide ("Rate limits in headers").
    @Test func openAIHeadersOfTheGuide() {
        let headers = RateLimitHeaders(
            headers: [
                "x-ratelimit-limit-requests": "60", "x-ratelimit-limit-tokens": "150000",
                "x-ratelimit-remaining-requests": "59", "x-ratelimit-remaining-tokens": "149984",
                "x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s",
            ], receivedAt: now)
        #expect(headers.requests == Allowance(limit: 60, remaining: 59, resetsAt: now + 1))
        #expect(headers.tokens == Allowance(limit: 150_000, remaining: 149_984, resetsAt: now + 360))
        #expect(headers.inputTokens == nil && headers.outputTokens == nil && headers.retryAt == nil)
    }

    /// `retry-after` in seconds (Anthropic's 429) or as an HTTP-date, `retry-after-ms` first;
    /// names in any case; never more than a day away.
    @Test(
        arguments: [
            (["retry-after": "20"], 20.0),
            (["Retry-After": "7"], 7),
            (["retry-after": "1.5"], 1.5),
            (["retry-after": "Thu, 21 Aug 2025 12:40:30 GMT"], 30),
            (["retry-after": "Thu, 21 Aug 2025 12:39:00 GMT"], 0),  // already past: now
            (["retry-after": "20", "retry-after-ms": "1500"], 1.5),
            (["retry-after": "20", "retry-after-ms": "soon"], 20),
            (["retry-after": "99999999999"], 86_400),
        ] as [([String: String], TimeInterval)])
    func retryAfterIsAnAbsoluteTime(headers: [String: String], seconds: TimeInterval) {
        #expect(RateLimitHeaders(headers: headers, receivedAt: now).retryAt == now + seconds)
    }

    @Test(
        arguments: [
            ("1s", 1.0), ("6m0s", 360), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("250us", 0.000_25),
            ("3µs", 0.000_003), ("0s", 0), ("12", 12), (" 2s ", 2), ("48h", 86_400),
        ] as [(String, TimeInterval)])
    func goDurations(text: String, seconds: TimeInterval) throws {
        let read = try #require(RateLimitHeaders.seconds(goDuration: text))
        #expect(abs(read - seconds) < 1e-9, "\(text) read as \(read)")
    }

    @Test(arguments: ["", "s", "1x", "-1s", "-1", "1.2.3s", "abc", "1h-1m", "nan", "inf", "1e400s"])
    func garbledDurationsAreNothing(text: String) {
        #expect(RateLimitHeaders.seconds(goDuration: text) == nil)
    }

    /// A header that cannot be read is left out; the others are kept.
    @Test func garbageIsIgnored() {
        let headers = RateLimitHeaders(
            headers: [
                "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "many",
                "anthropic-ratelimit-requests-reset": "tomorrow",
                "anthropic-ratelimit-tokens-limit": "-1", "anthropic-ratelimit-tokens-remaining": "",
                "x-ratelimit-remaining-tokens": "12.5", "x-ratelimit-reset-tokens": "later",
                "retry-after": "whenever",
            ], receivedAt: now)
        #expect(headers == RateLimitHeaders(requests: Allowance(limit: 50)))
    }

    @Test func noRateLimitHeadersIsNone() {
        let headers = RateLimitHeaders(headers: ["content-type": "application/json"], receivedAt: now)
        #expect(headers == .none)
        #expect(RateLimitHeaders(headers: [:], receivedAt: now) == .none)
    }

    /// RFC 3339 with fractions and offsets; a reset years away is read as a day away.
    @Test func resetTimesTakeFractionsAndOffsets() {
        func reset(_ text: String) -> Date? {
            RateLimitHeaders(headers: ["anthropic-ratelimit-requests-reset": text], receivedAt: now).requests?
                .resetsAt
        }
        #expect(reset("2025-08-21T12:40:20.5Z") == now + 20.5)
        #expect(reset("2025-08-21T14:40:20+02:00") == now + 20)
        #expect(reset("2125-08-21T12:40:00Z") == now + 86_400)
        #expect(reset("2025-08-21 12:40:20") == nil)
    }
}
