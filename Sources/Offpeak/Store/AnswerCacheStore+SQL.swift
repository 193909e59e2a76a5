import Foundation

/// What `offpeak cache stats|ls|show` read, decided once for both engines (`SQLEngine`): the sizes
/// from the running totals (`CacheRules.totals`), the rest over indexes, so each is a range read
/// however big the cache. Lookups and saves stay with each engine: they are the hot path, and each
/// makes them its own fastest way (`CacheLookups`, PostgreSQL's pipelined commit).
extension AnswerCacheStore where Self: SQLEngine {
    func cacheStats(now: Date, today: LocalDay) throws(OffpeakError) -> CacheStats {
        try reading { sql throws(OffpeakError) -> CacheStats in
            let sizes = try CacheRules.totals(sql)
            let expired = try sql.rows(
                "SELECT COUNT(*) AS expired FROM cache_entries WHERE expires_at <= \(now)")
            // Two subqueries: SQLite reads a MIN or a MAX off an index only when it is alone.
            let ages = try sql.rows(
                """
                SELECT (SELECT MIN(created_at) FROM cache_entries) AS oldest,
                    (SELECT MAX(created_at) FROM cache_entries) AS newest
                """)
            let counters = try sql.rows(
                """
                SELECT CAST(COALESCE(SUM(hits), 0) AS BIGINT) AS hits,
                    CAST(COALESCE(SUM(misses), 0) AS BIGINT) AS misses,
                    CAST(COALESCE(SUM(hits) FILTER (WHERE day = \(today.text)), 0) AS BIGINT) AS hits_today,
                    CAST(COALESCE(SUM(misses) FILTER (WHERE day = \(today.text)), 0) AS BIGINT) AS misses_today
                FROM cache_counters
                """)
            // Added in the rows' order (as `BudgetRules.spent` adds), so both engines print the same
            // cents; `id` first is the order of the index holding only cache hits.
            let saved = try sql.rows(
                """
                SELECT COALESCE(SUM(saved), 0.0) AS total,
                    COALESCE(SUM(saved) FILTER (WHERE at >= \(today.start)), 0.0) AS today
                FROM (SELECT naive_dollars - dollars AS saved, at FROM ledger WHERE cache_hit ORDER BY id) AS s
                """)
            guard let expired = expired.first, let ages = ages.first, let counters = counters.first,
                let saved = saved.first
            else {
                throw OffpeakError(.ioError, "the store answered no cache statistics")
            }
            return CacheStats(
                entries: sizes.entries, expiredEntries: try expired("expired"),
                rawBytes: sizes.rawBytes, storedBytes: sizes.storedBytes,
                hitsToday: try counters("hits_today"), missesToday: try counters("misses_today"),
                hitsTotal: try counters("hits"), missesTotal: try counters("misses"),
                savedDollarsToday: try saved("today"), savedDollarsTotal: try saved("total"),
                oldest: try ages("oldest"), newest: try ages("newest"))
        }
    }

    func cacheEntries(job: String?, expiredOnly: Bool, now: Date, limit: Int) throws(OffpeakError)
        -> [CacheEntrySummary]
    {
        // Only the conditions asked for: a condition made void by a bound flag would keep SQLite
        // from the job's index.
        var conditions: [SQLStatement] = []
        if let job { conditions.append("job = \(job)") }
        if expiredOnly { conditions.append("expires_at <= \(now)") }
        let filter: SQLStatement =
            conditions.isEmpty ? "" : "WHERE \(SQLStatement.joined(conditions, separator: " AND "))"
        return try alone { sql throws(OffpeakError) -> [CacheEntrySummary] in
            try sql.rows(
                """
                SELECT \(unescaped: CacheEntryRecord.summaryColumns) FROM cache_entries \(filter)
                ORDER BY last_access_at DESC, \(sql.bytewise("key")) LIMIT \(max(0, limit))
                """
            ).map { row throws(OffpeakError) in try CacheEntrySummary(row: row, now: now) }
        }
    }

    func cacheEntry(key: String, minPrefix: Int, now: Date) throws(OffpeakError)
        -> (keys: [String], entry: (summary: CacheEntrySummary, payload: Data)?)
    {
        let found = try reading { sql throws(OffpeakError) -> (keys: [String], row: (any SQLRow)?) in
            let exact = { (key: String) throws(OffpeakError) -> (any SQLRow)? in
                try sql.rows(
                    """
                    SELECT \(unescaped: CacheEntryRecord.summaryColumns), payload FROM cache_entries
                    WHERE key = \(key)
                    """
                ).first
            }
            if let row = try exact(key) { return ([key], row) }
            guard key.count >= minPrefix else { return ([], nil) }
            let keys = try sql.rows(
                """
                SELECT key FROM cache_entries WHERE substr(key, 1, length(\(key))) = \(key)
                ORDER BY \(sql.bytewise("key")) LIMIT 5
                """
            ).map { row throws(OffpeakError) -> String in try row("key") }
            guard keys.count == 1 else { return (keys, nil) }
            return (keys, try exact(keys[0]))
        }
        guard let row = found.row else { return (found.keys, nil) }
        do {
            return (
                found.keys, (try CacheEntrySummary(row: row, now: now), try row("payload", as: Data.self))
            )
        } catch {
            throw OffpeakError(
                .dataError, "cache entry \(found.keys.first ?? key) is unreadable", cause: "\(error)")
        }
    }
}

/// The cache's size rules, for the reports above and for the engines' saves, which evict in their
/// own write transaction.
enum CacheRules {
    /// The cache's entries and bytes, as the triggers on `cache_entries` keep them in `cache_totals`;
    /// summed over every entry if the row is missing.
    static func totals(_ sql: any SQLConnection) throws(OffpeakError)
        -> (entries: Int, rawBytes: Int, storedBytes: Int)
    {
        let kept = try sql.rows("SELECT entries, raw_bytes, stored_bytes FROM cache_totals WHERE id = 1")
        // Only when the row is missing: a plan holding the sum would read every entry's size.
        let rows =
            kept.isEmpty
            ? try sql.rows(
                """
                SELECT COUNT(*) AS entries, CAST(COALESCE(SUM(raw_bytes), 0) AS BIGINT) AS raw_bytes,
                    CAST(COALESCE(SUM(stored_bytes), 0) AS BIGINT) AS stored_bytes
                FROM cache_entries
                """) : kept
        guard let row = rows.first else { return (0, 0, 0) }
        return (try row("entries"), try row("raw_bytes"), try row("stored_bytes"))
    }

    /// Deletes least recently used entries (by key, byte by byte, among those used at once: the
    /// order both engines evict in, whatever order the rows were written in) until the payloads fit
    /// in `maxBytes`. The running total says whether any must go, so a save under the cap reads one
    /// row; the access index is then read a page at a time until enough have gone.
    /// - Returns: how many were deleted.
    static func evict(_ sql: any SQLConnection, maxBytes: Int) throws(OffpeakError) -> Int {
        var excess = try totals(sql).storedBytes - maxBytes
        var evicted = 0
        var after: (at: Date, key: String)?
        while excess > 0 {
            let from: SQLStatement =
                after.map {
                    "WHERE (last_access_at, \(sql.bytewise("key"))) > (\($0.at), \(sql.bytewise("\($0.key)")))"
                } ?? ""
            let rows = try sql.rows(
                """
                SELECT last_access_at, key, stored_bytes FROM cache_entries \(from)
                ORDER BY last_access_at, \(sql.bytewise("key")) LIMIT \(evictionPage)
                """)
            var victims: [String] = []
            for row in rows where excess > 0 {
                let key: String = try row("key")
                victims.append(key)
                excess -= try row("stored_bytes", as: Int.self)
                after = (try row("last_access_at"), key)
            }
            if !victims.isEmpty {
                evicted += try sql.execute("DELETE FROM cache_entries WHERE key IN \(list: victims)")
            }
            if rows.count < evictionPage { break }
        }
        return evicted
    }

    /// How many entries eviction reads at a time: most saves evict one or two.
    static let evictionPage = 64
}

extension CacheEntrySummary {
    /// A summary from a row holding `CacheEntryRecord.summaryColumns`.
    /// - Throws: when a column does not decode (a date past year 9999 written by an older offpeak):
    ///   a listing fails with the store's message instead of trapping.
    init(row: some SQLRow, now: Date) throws(OffpeakError) {
        let expiresAt: Date = try row("expires_at")
        self.init(
            key: try row("key"), kind: try row.value("kind", as: CacheKind.self),
            job: try row("job"), provider: try row("provider"), model: try row("model"),
            url: try row("url"), createdAt: try row("created_at"), expiresAt: expiresAt,
            lastAccessAt: try row("last_access_at"), hits: try row("hits"),
            rawBytes: try row("raw_bytes"), storedBytes: try row("stored_bytes"),
            expired: expiresAt <= now)
    }
}
