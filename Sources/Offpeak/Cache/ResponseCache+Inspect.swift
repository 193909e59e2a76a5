import Foundation
import GRDB

/// What `offpeak cache stats|ls|show|purge` read and remove. Each writes what is pending first, so
/// it sees this process's latest hits.
extension ResponseCache {
    /// The shortest key prefix `entry(key:)` looks up.
    public static let minKeyPrefix = 8

    /// The cache's size from its running totals (`cache_totals`), the expired entries and the
    /// oldest and newest over indexes, the counters by day, and what the ledger's cache hits saved
    /// (over an index holding only those rows): each a range read, however big the cache.
    public func stats(now: Date = Date()) throws(OffpeakError) -> CacheStats {
        try flush()
        let today = LocalDay(containing: now)
        return try store.sqlite.read { db in
            let sizes = try ResponseCache.totals(db)
            let expired =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM cache_entries WHERE expires_at <= ?", arguments: [now])
                ?? 0
            // Two subqueries: SQLite reads a MIN or a MAX off an index only when it is alone.
            let ages = try Row.fetchOne(
                db,
                sql: """
                    SELECT (SELECT MIN(created_at) FROM cache_entries) AS oldest,
                        (SELECT MAX(created_at) FROM cache_entries) AS newest
                    """)
            let counters = try Row.fetchOne(
                db,
                sql: """
                    SELECT COALESCE(SUM(hits), 0) AS hits, COALESCE(SUM(misses), 0) AS misses,
                        COALESCE(SUM(hits) FILTER (WHERE day = ?), 0) AS hits_today,
                        COALESCE(SUM(misses) FILTER (WHERE day = ?), 0) AS misses_today
                    FROM cache_counters
                    """, arguments: [today.text, today.text])
            let saved = try Row.fetchOne(
                db,
                sql: """
                    SELECT COALESCE(SUM(naive_dollars - dollars), 0) AS total,
                        COALESCE(SUM(naive_dollars - dollars) FILTER (WHERE at >= ?), 0) AS today
                    FROM ledger WHERE cache_hit
                    """, arguments: [today.start])
            return CacheStats(
                entries: sizes.entries, expiredEntries: expired,
                rawBytes: sizes.rawBytes, storedBytes: sizes.storedBytes,
                hitsToday: counters?["hits_today"] ?? 0, missesToday: counters?["misses_today"] ?? 0,
                hitsTotal: counters?["hits"] ?? 0, missesTotal: counters?["misses"] ?? 0,
                savedDollarsToday: saved?["today"] ?? 0, savedDollarsTotal: saved?["total"] ?? 0,
                oldest: ages?["oldest"], newest: ages?["newest"])
        }
    }

    /// Entries, most recently used first.
    /// - Parameters:
    ///   - job: only the entries this job stored.
    ///   - expiredOnly: only entries whose TTL has passed at `now`.
    public func entries(job: String? = nil, expiredOnly: Bool = false, now: Date = Date(), limit: Int = 100)
        throws(OffpeakError) -> [CacheEntrySummary]
    {
        try flush()
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let job {
            conditions.append("job = ?")
            arguments += [job]
        }
        if expiredOnly {
            conditions.append("expires_at <= ?")
            arguments += [now]
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        arguments += [max(0, limit)]
        let sql = """
            SELECT \(CacheEntryRecord.summaryColumns) FROM cache_entries \(filter)
            ORDER BY last_access_at DESC, key LIMIT ?
            """
        return try store.sqlite.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map {
                try CacheEntrySummary(row: $0, now: now)
            }
        }
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
        let found = try store.sqlite.read { db -> (keys: [String], row: Row?) in
            let exact = "SELECT \(CacheEntryRecord.summaryColumns), payload FROM cache_entries WHERE key = ?"
            if let row = try Row.fetchOne(db, sql: exact, arguments: [key]) { return ([key], row) }
            guard key.count >= Self.minKeyPrefix else { return ([], nil) }
            let keys = try String.fetchAll(
                db,
                sql:
                    "SELECT key FROM cache_entries WHERE substr(key, 1, length(?1)) = ?1 ORDER BY key LIMIT 5",
                arguments: [key])
            guard keys.count == 1 else { return (keys, nil) }
            return (keys, try Row.fetchOne(db, sql: exact, arguments: [keys[0]]))
        }
        guard let row = found.row else {
            if found.keys.count > 1 {
                let some = found.keys.prefix(3).joined(separator: ", ")
                throw OffpeakError(
                    .usage, "key prefix '\(key)' matches several entries (\(some), ...); give more of it")
            }
            return nil
        }
        do {
            let summary = try CacheEntrySummary(row: row, now: now)
            return (summary, try CachePayload.text(row["payload"]))
        } catch {
            throw OffpeakError(
                .dataError, "cache entry \(found.keys.first ?? key) is unreadable", cause: "\(error)")
        }
    }

    /// Deletes the entries in `scope`; the day counters stay.
    /// - Returns: how many were deleted.
    @discardableResult
    public func purge(_ scope: PurgeScope, now: Date = Date()) throws(OffpeakError) -> Int {
        try flush()
        defer { CacheLookups.noteWrite() }
        return try store.sqlite.write { db in
            switch scope {
            case .expired:
                try db.execute(sql: "DELETE FROM cache_entries WHERE expires_at <= ?", arguments: [now])
            case .job(let job):
                try db.execute(sql: "DELETE FROM cache_entries WHERE job = ?", arguments: [job])
            case .all:
                try db.execute(sql: "DELETE FROM cache_entries")
            }
            return db.changesCount
        }
    }
}
