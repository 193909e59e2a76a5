/// One per-minute limit as a token bucket, the algorithm Anthropic documents for its limits:
/// the bucket holds at most a minute's allowance, starts full, and is replenished continuously
/// (allowance / 60 every second) rather than reset at fixed intervals. A request is admitted
/// only when the bucket holds its whole cost; a refused request takes nothing.
///
/// OpenAI describes its reset headers as the time until the limit "resets to its initial
/// state", which for a continuously refilled bucket is the time until it is full again, so the
/// one model serves both APIs.
struct TokenBucket: Sendable, Equatable {
    /// The allowance per minute, and so the most the bucket holds.
    let capacity: Double
    /// What the bucket holds at `updated`.
    private(set) var level: Double
    private(set) var updated: ContinuousClock.Instant

    init(perMinute: Int, now: ContinuousClock.Instant) {
        self.capacity = Double(perMinute)
        self.level = Double(perMinute)
        self.updated = now
    }

    /// Replenishment per second.
    var ratePerSecond: Double { capacity / 60 }

    /// Adds what flowed in since the last look, never above `capacity`. Time never runs back:
    /// an earlier `now` (two requests reading the clock out of order) adds nothing.
    mutating func refill(to now: ContinuousClock.Instant) {
        guard now > updated else { return }
        level = min(capacity, level + ratePerSecond * (now - updated).seconds)
        updated = now
    }

    /// Seconds until the bucket holds `amount`; 0 when it already does, infinite when it never
    /// can (more than `capacity`).
    func secondsUntil(holding amount: Double) -> Double {
        if amount > capacity { return .infinity }
        // A billionth of a unit short is float rounding in the refill, not a real shortfall.
        let missing = amount - level
        return missing <= 1e-9 ? 0 : missing / ratePerSecond
    }

    /// Seconds until the bucket is full again: the "reset" of both APIs' headers.
    var secondsUntilFull: Double { secondsUntil(holding: capacity) }

    mutating func take(_ amount: Double) {
        level -= amount
    }

    /// Gives back what a request reserved and did not use, never above `capacity`.
    mutating func giveBack(_ amount: Double) {
        level = min(capacity, level + max(0, amount))
    }

    /// What is left, as the headers count it: whole units only.
    var remaining: Int { max(0, Int(level.rounded(.down))) }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
