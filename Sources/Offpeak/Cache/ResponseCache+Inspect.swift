import Foundation

/// What `offpeak cache stats|ls|show|purge` read and remove. Each writes what is pending first, so
/// it sees this process's latest hits.
extension ResponseCache {
    /// The shortest key prefix `entry(key:)` looks up.
    public static let minKeyPrefix = 8

    /// The cache's size, expired entries, oldest and newest, its counters by day, and what the
    /// ledger's cache hits saved.
    public func stats(now: Date = Date()) throws(OffpeakError) -> CacheStats {
        try flush()
        return try store.cache.cacheStats(now: now, today: LocalDay(containing: now))
    }

    /// Entries, most recently used first.
    /// - Parameters:
    ///   - job: only the entries this job stored.
    ///   - expiredOnly: only entries whose TTL has passed at `now`.
    public func entries(job: String? = nil, expiredOnly: Bool = false, now: Date = Date(), limit: Int = 100)
        throws(OffpeakError) -> [CacheEntrySummary]
    {
        try flush()
        return try store.cache.cacheEntries(job: job, expiredOnly: expiredOnly, now: now, limit: limit)
    }

    /// The entry and its payload as JSON text, or nil.
    ///
    /// `key` may be a prefix of at least `minKeyPrefix` characters of exactly one key (as `offpeak
    /// cache ls` shows them).
    /// - Throws: a usage error when the prefix matches several keys; a data error when the payload
    ///   is unreadable.
    func entry(key: String, now: Date = Date()) throws(OffpeakError)
        -> (summary: CacheEntrySummary, payload: String)?
    {
        try flush()
        let found = try store.cache.cacheEntry(key: key, minPrefix: Self.minKeyPrefix, now: now)
        guard let entry = found.entry else {
            if found.keys.count > 1 {
                let some = found.keys.prefix(3).joined(separator: ", ")
                throw OffpeakError(
                    .usage, "key prefix '\(key)' matches several entries (\(some), ...); give more of it")
            }
            return nil
        }
        do {
            return (entry.summary, try CachePayload.text(entry.payload))
        } catch {
            throw OffpeakError(
                .dataError, "cache entry \(found.keys.first ?? key) is unreadable", cause: "\(error)")
        }
    }

    /// Deletes the entries in `scope`; the day counters stay.
    /// - Returns: how many were deleted, and how many `.expired` kept for reuse.
    @discardableResult
    public func purge(_ scope: PurgeScope, now: Date = Date()) throws(OffpeakError) -> CachePurge {
        try flush()
        return try store.cache.purgeCache(scope, now: now)
    }
}
