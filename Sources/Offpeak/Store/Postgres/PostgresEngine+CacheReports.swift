import Foundation
import NIOCore
import PostgresNIO

/// What `offpeak cache stats|ls|show` read on PostgreSQL, as the SQLite engine reads it
/// (`SQLiteStore+AnswerCache`): the sizes from the running totals, the rest over indexes.
extension PostgresEngine {
    /// One statement, so one snapshot: the sizes, the expired entries, the ages, the day counters and
    /// what the ledger's cache hits saved.
    func cacheStats(now: Date, today: LocalDay) throws(OffpeakError) -> CacheStats {
        let rows = try store.query(
            """
            SELECT t.entries, t.raw_bytes, t.stored_bytes,
                (SELECT count(*) FROM cache_entries WHERE expires_at <= \(now)) AS expired,
                (SELECT min(created_at) FROM cache_entries) AS oldest,
                (SELECT max(created_at) FROM cache_entries) AS newest,
                c.hits, c.misses, c.hits_today, c.misses_today, s.saved, s.saved_today
            FROM (SELECT coalesce(sum(hits), 0)::bigint AS hits, coalesce(sum(misses), 0)::bigint AS misses,
                    coalesce(sum(hits) FILTER (WHERE day = \(today.text)), 0)::bigint AS hits_today,
                    coalesce(sum(misses) FILTER (WHERE day = \(today.text)), 0)::bigint AS misses_today
                FROM cache_counters) c,
                (SELECT coalesce(sum(naive_dollars - dollars ORDER BY id), 0) AS saved,
                    coalesce(sum(naive_dollars - dollars ORDER BY id) FILTER (WHERE at >= \(today.start)), 0)
                        AS saved_today
                FROM ledger WHERE cache_hit) s
            LEFT JOIN cache_totals t ON t.id = 1
            """)
        guard let row = rows.first else {
            throw OffpeakError(.ioError, "PostgreSQL at \(store.url.endpoint) answered no cache statistics")
        }
        let columns = PostgresColumns(row, store)
        let totals: (entries: Int, rawBytes: Int, storedBytes: Int)
        if let entries = try columns("entries", as: Int?.self) {
            totals = (entries, try columns("raw_bytes"), try columns("stored_bytes"))
        } else {
            totals = try cacheTotals()
        }
        return CacheStats(
            entries: totals.entries, expiredEntries: try columns("expired"),
            rawBytes: totals.rawBytes, storedBytes: totals.storedBytes,
            hitsToday: try columns("hits_today"), missesToday: try columns("misses_today"),
            hitsTotal: try columns("hits"), missesTotal: try columns("misses"),
            savedDollarsToday: try columns("saved_today"), savedDollarsTotal: try columns("saved"),
            oldest: try columns("oldest"), newest: try columns("newest"))
    }

    func cacheEntries(job: String?, expiredOnly: Bool, now: Date, limit: Int) throws(OffpeakError)
        -> [CacheEntrySummary]
    {
        var entries: [CacheEntrySummary] = []
        for row in try store.query(
            """
            SELECT \(unescaped: CacheEntryRecord.summaryColumns) FROM cache_entries
            WHERE (\(job == nil) OR job = \(job ?? "")) AND (NOT \(expiredOnly) OR expires_at <= \(now))
            ORDER BY last_access_at DESC, key COLLATE "C" LIMIT \(max(0, limit))
            """)
        {
            entries.append(try summary(row, now: now))
        }
        return entries
    }

    func cacheEntry(key: String, minPrefix: Int, now: Date) throws(OffpeakError)
        -> (keys: [String], entry: (summary: CacheEntrySummary, payload: Data)?)
    {
        let (keys, row) = try snapshot { () throws(OffpeakError) -> ([String], PostgresRow?) in
            if let row = try entryRow(key) { return ([key], row) }
            guard key.count >= minPrefix else { return ([], nil) }
            var keys: [String] = []
            for row in try store.query(
                """
                SELECT key FROM cache_entries WHERE starts_with(key, \(key)) ORDER BY key COLLATE "C" LIMIT 5
                """)
            {
                keys.append(try PostgresColumns(row, store)("key"))
            }
            guard keys.count == 1 else { return (keys, nil) }
            return (keys, try entryRow(keys[0]))
        }
        guard let row else { return (keys, nil) }
        do {
            let payload = try PostgresColumns(row, store)("payload", as: ByteBuffer.self)
            return (keys, (try summary(row, now: now), Data(payload.readableBytesView)))
        } catch {
            throw OffpeakError(
                .dataError, "cache entry \(keys.first ?? key) is unreadable", cause: "\(error)")
        }
    }

    private func entryRow(_ key: String) throws(OffpeakError) -> PostgresRow? {
        try store.query(
            "SELECT \(unescaped: CacheEntryRecord.summaryColumns), payload FROM cache_entries WHERE key = \(key)"
        ).first
    }

    /// A summary from a row holding `CacheEntryRecord.summaryColumns`.
    private func summary(_ row: PostgresRow, now: Date) throws(OffpeakError) -> CacheEntrySummary {
        let columns = PostgresColumns(row, store)
        let expiresAt: Date = try columns("expires_at")
        return CacheEntrySummary(
            key: try columns("key"), kind: try columns.value("kind", as: CacheKind.self),
            job: try columns("job"), provider: try columns("provider"), model: try columns("model"),
            url: try columns("url"), createdAt: try columns("created_at"), expiresAt: expiresAt,
            lastAccessAt: try columns("last_access_at"), hits: try columns("hits"),
            rawBytes: try columns("raw_bytes"), storedBytes: try columns("stored_bytes"),
            expired: expiresAt <= now)
    }
}
