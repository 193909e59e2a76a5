import Foundation
import Synchronization

/// Values a pass read from the store lately, by key, so a read made for every call (a model's batch
/// fitness, its measured speed) goes to the store at most once every `freshFor`. For advice only:
/// a value another process writes arrives late by that much at most; one this pass writes
/// (`keep`) at once.
final class RecentReads<Value: Sendable>: Sendable {
    private struct Entry {
        var value: Value?
        var at: Date
    }

    private let entries = Mutex<[String: Entry]>([:])

    static var freshFor: TimeInterval { 1 }

    /// The value kept for `key` when read within the last `freshFor` before `now`, else `read`'s.
    func value(for key: String, now: Date, read: () throws(OffpeakError) -> Value?) throws(OffpeakError)
        -> Value?
    {
        if let kept = entries.withLock({ $0[key] }), kept.at <= now,
            now.timeIntervalSince(kept.at) < Self.freshFor
        {
            return kept.value
        }
        let value = try read()
        entries.withLock { $0[key] = Entry(value: value, at: now) }
        return value
    }

    /// `value` as this pass just wrote it.
    func keep(_ value: Value, for key: String, at now: Date) {
        entries.withLock { $0[key] = Entry(value: value, at: now) }
    }

    /// Reads `key` from the store next time.
    func forget(_ key: String) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }
}
