import Foundation

/// Hits, misses and touches counted in memory, to be written together in one transaction.
///
/// A hit bumps its entry's `hits` and `last_access_at` and the day's counter. Each bump rewrites a
/// page holding a payload (a 4 KB page holds about two answers), so writing them one by one would
/// cost several times the lookup. `ResponseCache` collects them here and writes them when the
/// oldest has waited `maxAge` (or `maxCount` have piled up), before any write or inspection of its
/// own (so its evictions see its latest accesses), on `flush()` and on deinit. What another
/// process sees of them (`offpeak cache stats`, its evictions) lags by up to `maxAge`.
struct PendingAccesses: Sendable {
    /// What is written at the latest when this many accesses are pending...
    static let maxCount = 1_000_000
    /// ...or when the oldest has waited this long (checked at the next access).
    static let maxAge = Duration.seconds(5)

    struct Touch: Sendable {
        var hits: Int
        var lastAccessAt: Date

        mutating func record(hit: Bool, at now: Date) {
            if hit { hits += 1 }
            lastAccessAt = max(lastAccessAt, now)
        }
    }

    struct CounterKey: Hashable, Sendable {
        var day: String
        var kind: CacheKind
    }

    struct Tally: Sendable {
        var hits = 0
        var misses = 0
    }

    /// What one flush writes.
    struct Batch: Sendable {
        /// Each touched entry's key, at the index of its touch.
        var keys: [String] = []
        var touches: [Touch] = []
        var counters: [CounterKey: Tally] = [:]

        var isEmpty: Bool { touches.isEmpty && counters.isEmpty }
    }

    private var batch = Batch()
    /// Where each key's touch is in `batch.touches`. A hit looks its key up here without changing
    /// the dictionary (one hash of the 64-digit key); it changes only for a key new to the batch.
    private var slots: [String: Int] = [:]
    private var count = 0
    private var oldest: ContinuousClock.Instant?
    /// The day being counted, and its counts by kind (answer, source), kept out of the dictionary
    /// until the day ends or the batch is taken: most accesses fall on the same day.
    private var day = LocalDay?.none
    private var answers = Tally()
    private var sources = Tally()

    /// Counts a hit (when `hit`) or a miss, and touches `key` when given; returns the batch to write
    /// when one is due.
    mutating func record(key: String?, kind: CacheKind, hit: Bool, at now: Date) -> Batch? {
        if let key {
            if let slot = slots[key] {
                batch.touches[slot].record(hit: hit, at: now)
            } else {
                slots[key] = batch.touches.count
                batch.keys.append(key)
                batch.touches.append(Touch(hits: hit ? 1 : 0, lastAccessAt: now))
            }
        }
        if day?.contains(now) != true {
            settleDay()
            day = LocalDay(containing: now)
        }
        switch (kind, hit) {
        case (.answer, true): answers.hits += 1
        case (.answer, false): answers.misses += 1
        case (.source, true): sources.hits += 1
        case (.source, false): sources.misses += 1
        }
        count += 1
        let clock = ContinuousClock.now
        guard let oldest else {
            oldest = clock
            return count >= Self.maxCount ? take() : nil
        }
        return count >= Self.maxCount || clock - oldest >= Self.maxAge ? take() : nil
    }

    /// Everything pending, leaving nothing.
    mutating func take() -> Batch {
        settleDay()
        defer {
            batch = Batch()
            slots = [:]
            count = 0
            oldest = nil
        }
        return batch
    }

    /// Moves the day's counts into the batch.
    private mutating func settleDay() {
        guard let day else { return }
        for (kind, tally) in [(CacheKind.answer, answers), (.source, sources)]
        where tally.hits > 0 || tally.misses > 0 {
            batch.counters[CounterKey(day: day.text, kind: kind), default: Tally()].hits += tally.hits
            batch.counters[CounterKey(day: day.text, kind: kind), default: Tally()].misses += tally.misses
        }
        answers = Tally()
        sources = Tally()
    }
}

/// A local calendar day: its bounds and its 'YYYY-MM-DD' name.
struct LocalDay: Sendable {
    let start: Date
    let end: Date
    let text: String

    init(containing date: Date, calendar: Calendar = .current) {
        start = calendar.startOfDay(for: date)
        end = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
        let parts = calendar.dateComponents([.year, .month, .day], from: start)
        text = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    func contains(_ date: Date) -> Bool { date >= start && date < end }
}
