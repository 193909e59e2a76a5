import Foundation

/// The answer cache's rows: answers and fetched sources by key, their payloads as stored (the
/// cache compresses and decodes them), their hits and last access, the day counters, and eviction
/// of the least recently used past the size cap.
///
/// One role of the store seam (`Store`), played by both engines: SQLite (`SQLiteStore`) and
/// PostgreSQL (`PostgresEngine`), whose writes to the cache take turns under its transaction
/// advisory lock (`PostgresEngine.lockCache`), as SQLite's under its one writer.
protocol AnswerCacheStore: AnyObject, Sendable {
    /// Looks `key` up and hands `body` its payload in place (valid only inside `body`) with whether
    /// it is fresh at `now`; nil when there is no entry.
    func findCacheEntry<T>(
        key: String, now: Date, _ body: (_ payload: UnsafeRawBufferPointer, _ fresh: Bool) -> T
    ) throws(OffpeakError) -> T?

    /// Looks every one of `keys` up, as `findCacheEntry` does each, and hands `body` each entry
    /// found (its key, payload in place, freshness); what `body` made of each, by key. An engine a
    /// round trip away reads them all at once; the default asks `findCacheEntry` key by key.
    func findCacheEntries<T>(
        keys: [String], now: Date,
        _ body: (_ key: String, _ payload: UnsafeRawBufferPointer, _ fresh: Bool) -> T
    ) throws(OffpeakError) -> [String: T]

    /// Writes `accesses`, upserts `records` (an entry already there is replaced but keeps its hit
    /// count) and deletes the least recently used entries until the payloads fit in `maxBytes`, in
    /// one transaction.
    /// - Returns: how many entries were evicted.
    func saveCacheEntries(_ records: [CacheEntryRecord], accesses: PendingAccesses.Batch, maxBytes: Int)
        throws(OffpeakError) -> Int

    /// Writes what lookups counted: entries' hits and last access, and the day counters.
    func writeCacheAccesses(_ accesses: PendingAccesses.Batch) throws(OffpeakError)

    /// Writes `accesses` and makes the entry fresh again until `expiresAt` (a source not modified).
    func refreshCacheEntry(key: String, expiresAt: Date, now: Date, accesses: PendingAccesses.Batch)
        throws(OffpeakError)

    /// Deletes the entry at `key` if its payload is still `payload` (it was unreadable).
    func deleteCacheEntry(key: String, payload: Data) throws(OffpeakError)

    /// Sizes, expired entries, ages and the hit counters, with what the ledger's cache hits saved
    /// in all and since the start of `today`.
    func cacheStats(now: Date, today: LocalDay) throws(OffpeakError) -> CacheStats

    /// Entries, most recently used first: only `job`'s, only those expired at `now`, at most `limit`.
    func cacheEntries(job: String?, expiredOnly: Bool, now: Date, limit: Int) throws(OffpeakError)
        -> [CacheEntrySummary]

    /// The entry whose key is `key`, or failing that the one key starting with `key` when `key`
    /// has at least `minPrefix` characters.
    /// - Returns: the keys matched (up to 5), and the entry with its stored payload when exactly one did.
    func cacheEntry(key: String, minPrefix: Int, now: Date) throws(OffpeakError)
        -> (keys: [String], entry: (summary: CacheEntrySummary, payload: Data)?)

    /// Deletes the entries in `scope`; the day counters stay.
    /// - Returns: how many were deleted, and for `.expired` how many it kept for reuse.
    func purgeCache(_ scope: PurgeScope, now: Date) throws(OffpeakError) -> CachePurge
}

extension AnswerCacheStore {
    func findCacheEntries<T>(
        keys: [String], now: Date,
        _ body: (_ key: String, _ payload: UnsafeRawBufferPointer, _ fresh: Bool) -> T
    ) throws(OffpeakError) -> [String: T] {
        var found: [String: T] = [:]
        for key in keys where found[key] == nil {
            if let value = try findCacheEntry(key: key, now: now, { body(key, $0, $1) }) {
                found[key] = value
            }
        }
        return found
    }
}
