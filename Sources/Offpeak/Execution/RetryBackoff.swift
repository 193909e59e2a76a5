import Foundation

/// When a failed item is tried again: 30 s after its first failure, doubling each time, never more
/// than 5 h apart. No jitter: items are retried by the next tick after their time, which spreads
/// them already, and a user can be told the exact time.
enum RetryBackoff {
    static let base: TimeInterval = 30
    static let cap: TimeInterval = 5 * 3600

    /// The wait after the `attempt`-th failed attempt (1-based).
    static func delay(afterAttempt attempt: Int) -> TimeInterval {
        let exponent = Double(min(max(attempt, 1) - 1, 30))
        return min(cap, base * pow(2, exponent))
    }
}
