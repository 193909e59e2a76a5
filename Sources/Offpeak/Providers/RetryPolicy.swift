import Foundation

/// What to do after a failed attempt.
enum RetryDecision: Equatable, Sendable {
    /// Try again after waiting this many seconds.
    case retry(after: TimeInterval)
    /// Stop and report the failure.
    case giveUp
}

/// When a failed provider call is worth repeating, and how long to wait first. Pure: the caller
/// does the waiting, so tests check every rule without sleeping.
///
/// Overload and outages pass (429, 500, 502, 503, 504, 529, timeouts, cut-off answers, refused
/// connections), so those are retried with capped exponential backoff and full jitter, which
/// spreads many clients' retries apart. A server's `retry-after` is obeyed when it is short enough
/// to be worth waiting for. Everything else, including a 429 that means the account hit a spend
/// limit, would fail the same way again and is never retried.
struct RetryPolicy: Sendable, Equatable {
    /// Retries after the first attempt; 0 means one attempt only.
    var maxRetries: Int
    /// The ceiling of the first backoff; each retry doubles it.
    var baseDelay: TimeInterval
    /// The largest backoff ceiling.
    var maxDelay: TimeInterval
    /// A `retry-after` longer than this gives up instead: the work waits for a later run.
    var maxRetryAfter: TimeInterval

    init(
        maxRetries: Int = 4, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 30,
        maxRetryAfter: TimeInterval = 60
    ) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// Statuses that mean "busy or briefly broken": 429 rate limits, 5xx gateways, Anthropic's 529.
    static let retryableStatuses: Set<Int> = [429, 500, 502, 503, 504, 529]

    /// Decides what follows a failed attempt.
    ///
    /// - Parameters:
    ///   - error: the attempt's failure.
    ///   - errorCode: the provider's machine-readable error code or type, when it sent one.
    ///   - retryAfterHeader: the response's `retry-after`, in seconds or as an HTTP-date.
    ///   - attempt: retries already made for this call (0 after the first failure).
    ///   - now: the clock an HTTP-date is measured against.
    ///   - random: the jitter source.
    func decision(
        for error: ProviderError, errorCode: String? = nil, retryAfterHeader: String? = nil, attempt: Int,
        now: Date = Date(), random: inout some RandomNumberGenerator
    ) -> RetryDecision {
        guard attempt < maxRetries, Self.isRetryable(error, errorCode: errorCode) else { return .giveUp }
        if case .http = error, let header = retryAfterHeader,
            let wait = Self.seconds(retryAfter: header, now: now)
        {
            return wait <= maxRetryAfter ? .retry(after: wait) : .giveUp
        }
        return .retry(after: backoff(attempt: attempt, random: &random))
    }

    /// Full jitter: a uniform wait between 0 and the capped exponential ceiling.
    func backoff(attempt: Int, random: inout some RandomNumberGenerator) -> TimeInterval {
        let ceiling = min(maxDelay, baseDelay * pow(2, Double(max(0, attempt))))
        guard ceiling > 0 else { return 0 }
        return Double.random(in: 0...ceiling, using: &random)
    }

    static func isRetryable(_ error: ProviderError, errorCode: String?) -> Bool {
        switch error {
        case .unreachable, .timeout, .truncated: return true
        case .badResponse, .missingKey, .keyRefused: return false
        case .http(let status, let message, _):
            if status == 429 && isSpendLimit(errorCode: errorCode, message: message) { return false }
            return retryableStatuses.contains(status)
        }
    }

    /// A 429 that no amount of waiting fixes: the account is out of money or over its limit.
    /// Gemini answers every limit, per minute or per day, `RESOURCE_EXHAUSTED` "You exceeded your
    /// current quota ... billing details": a rate limit, waited for (a spent day fails alike call
    /// after call, and `FailureStreak` stops the run).
    static func isSpendLimit(errorCode: String?, message: String) -> Bool {
        if errorCode == "insufficient_quota" { return true }
        if errorCode == "RESOURCE_EXHAUSTED" { return false }
        let text = message.lowercased()
        let signs = ["billing", "credit", "quota", "spend limit", "spending limit", "usage limit"]
        return signs.contains { text.contains($0) }
    }

    /// Parses `retry-after`: delay seconds, or an HTTP-date (a past date means now).
    static func seconds(retryAfter header: String, now: Date) -> TimeInterval? {
        let value = header.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(value), seconds.isFinite { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in [
            "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
        ] {
            formatter.dateFormat = format
            if let date = formatter.date(from: value) { return max(0, date.timeIntervalSince(now)) }
        }
        return nil
    }
}
