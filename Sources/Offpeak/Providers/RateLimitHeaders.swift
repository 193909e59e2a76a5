import Foundation

/// What a provider's response headers say about its rate limits: how much of each limit is left,
/// when it is back, and how long the provider asked us to stay away.
///
/// Read tolerantly: a header that is missing, negative or garbled is left out, never an error, so
/// a proxy that mangles one costs offpeak the information and nothing else. Every time is made
/// absolute against the moment the response arrived, so the value stays true while it waits.
///
/// The headers, as the two APIs document them:
/// - Anthropic (https://docs.anthropic.com/en/api/rate-limits, "Response headers"):
///   `anthropic-ratelimit-requests-limit`, `-remaining`, `-reset`, the same for `-tokens-`
///   (the most restrictive token limit in effect), `-input-tokens-` and `-output-tokens-`. Counts
///   are whole numbers (token counts rounded to the nearest thousand); `-reset` is an RFC 3339 time
///   at which the limit is fully replenished (`2025-08-21T12:40:59Z`). A 429 carries `retry-after`
///   in seconds.
/// - OpenAI (https://platform.openai.com/docs/guides/rate-limits, "Rate limits in headers"):
///   `x-ratelimit-limit-requests`, `x-ratelimit-remaining-requests`, `x-ratelimit-reset-requests`
///   and the same with `-tokens`; a reset is the time until the limit is back to its initial
///   state, written as a Go duration (`1s`, `6m0s`, `20ms`).
/// - `retry-after` (RFC 9110 §10.2.3) is delay-seconds or an HTTP-date; `retry-after-ms`, in
///   milliseconds, is read first when present, as the official SDKs do (openai-python
///   `_base_client.py`, `_parse_retry_after_header`).
struct RateLimitHeaders: Sendable, Equatable {
    /// One limit as the provider reported it; any part may be missing.
    struct Allowance: Sendable, Equatable {
        /// The most the limit allows per period (per minute, for both APIs' documented limits).
        var limit: Int?
        /// What is left before the provider answers 429.
        var remaining: Int?
        /// When the limit is back to `limit`.
        var resetsAt: Date?

        init(limit: Int? = nil, remaining: Int? = nil, resetsAt: Date? = nil) {
            self.limit = limit
            self.remaining = remaining
            self.resetsAt = resetsAt
        }
    }

    var requests: Allowance?
    /// Tokens of every kind: Anthropic's most restrictive token limit, OpenAI's tokens per minute.
    var tokens: Allowance?
    /// Anthropic's input and output token limits, reported beside `tokens`.
    var inputTokens: Allowance?
    var outputTokens: Allowance?
    /// The provider asked not to be called before this time.
    var retryAt: Date?

    init(
        requests: Allowance? = nil, tokens: Allowance? = nil, inputTokens: Allowance? = nil,
        outputTokens: Allowance? = nil, retryAt: Date? = nil
    ) {
        self.requests = requests
        self.tokens = tokens
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.retryAt = retryAt
    }

    /// No rate-limit headers at all (a local server, offpeak-sim, a transport failure).
    static let none = RateLimitHeaders()

    /// A reset or `retry-after` further away than this is read as this far: offpeak asks again
    /// then, rather than trusting a garbled header to park it for years.
    static let longestWait: TimeInterval = 86_400

    /// Reads the headers of one response.
    /// - Parameters:
    ///   - headers: the response's headers; names are matched without regard to case.
    ///   - now: when the response arrived; relative resets and `retry-after` count from it.
    init(headers: [String: String], receivedAt now: Date) {
        var named: [String: String] = [:]
        for (name, value) in headers { named[name.lowercased()] = value }
        func anthropic(_ dimension: String) -> Allowance? {
            let prefix = "anthropic-ratelimit-\(dimension)-"
            return Self.allowance(
                limit: named[prefix + "limit"], remaining: named[prefix + "remaining"],
                resetsAt: named[prefix + "reset"].flatMap { Self.time(rfc3339: $0, now: now) })
        }
        func openAI(_ dimension: String) -> Allowance? {
            Self.allowance(
                limit: named["x-ratelimit-limit-\(dimension)"],
                remaining: named["x-ratelimit-remaining-\(dimension)"],
                resetsAt: named["x-ratelimit-reset-\(dimension)"].flatMap { Self.seconds(goDuration: $0) }
                    .map { now.addingTimeInterval($0) })
        }
        self.init(
            requests: anthropic("requests") ?? openAI("requests"),
            tokens: anthropic("tokens") ?? openAI("tokens"),
            inputTokens: anthropic("input-tokens"), outputTokens: anthropic("output-tokens"),
            retryAt: Self.retryAt(
                seconds: named["retry-after"], milliseconds: named["retry-after-ms"], now: now))
    }

    /// An allowance from its three header values, or nil when none of them could be read.
    private static func allowance(limit: String?, remaining: String?, resetsAt: Date?) -> Allowance? {
        let allowance = Allowance(
            limit: limit.flatMap(count), remaining: remaining.flatMap(count), resetsAt: resetsAt)
        return allowance == Allowance() ? nil : allowance
    }

    /// `retry-after-ms`, else `retry-after` (seconds or an HTTP-date), as an absolute time.
    private static func retryAt(seconds: String?, milliseconds: String?, now: Date) -> Date? {
        if let text = milliseconds?.trimmingCharacters(in: .whitespaces), let value = Double(text),
            value.isFinite, value >= 0
        {
            return now.addingTimeInterval(min(value / 1000, longestWait))
        }
        guard let text = seconds, let wait = RetryPolicy.seconds(retryAfter: text, now: now) else {
            return nil
        }
        return now.addingTimeInterval(min(wait, longestWait))
    }
}
