import Foundation
import GRDB

/// The answer cache on SQLite: `cache_entries`, `cache_counters` and the running `cache_totals`.
/// Lookups read through a connection of the cache's own (`CacheLookups`); every write here tells
/// it (`CacheLookups.noteWrite`), so this process always sees its own writes.
extension SQLiteStore: AnswerCacheStore {
    /// The connection lookups read through, opened at the first lookup (a tick that only purges,
    /// and a run answered by nothing cached, never pay for a second connection); nil when lookups
    /// go through the pool (a read-only store, or the connection could not be opened).
    var lookups: CacheLookups? {
        lookupConnection.withLock { state in
            if case .opened(let lookups) = state { return lookups }
            // A read-only store is read as it could be opened (maybe immutable): through its pool.
            let opened = isReadOnly ? nil : try? CacheLookups(url: url)
            state = .opened(opened)
            return opened
        }
    }

    enum LookupConnection {
        case unopened
        case opened(CacheLookups?)
    }

    func findCacheEntry<T>(
        key: String, now: Date, _ body: (_ payload: UnsafeRawBufferPointer, _ fresh: Bool) -> T
    ) throws(OffpeakError) -> T? {
        do {
            if let lookups { return try lookups.find(key, now: now) { body($0.payload, $0.fresh) } }
            return try pool.read { db in
                guard let row = try Row.fetchOne(db, sql: CacheLookups.lookupSQL, arguments: [key, now])
                else {
                    return nil
                }
                let payload = row[0] as Data? ?? Data()
                let fresh = row[1] as Bool? ?? false
                return payload.withUnsafeBytes { body($0, fresh) }
            }
        } catch {
            throw SQLiteStore.failure(error)
        }
    }

    /// One prepared statement per entry: a run saves after every call, so the record is not
    /// encoded through Codable and decoded back as `CacheEntryRecord.save` would.
    func saveCacheEntries(_ records: [CacheEntryRecord], accesses: PendingAccesses.Batch, maxBytes: Int)
        throws(OffpeakError) -> Int
    {
        let cache = CacheWrite(records: records, accesses: accesses, maxBytes: maxBytes)
        try cache.checkDates()
        defer { CacheLookups.noteWrite() }
        return try write { db in try Self.save(cache, db) }
    }

    /// Writes the accesses and the records, then evicts, in the transaction of `db` (`checkDates` first;
    /// `CacheLookups.noteWrite` after).
    /// - Returns: how many entries were evicted.
    static func save(_ cache: CacheWrite, _ db: Database) throws -> Int {
        try PendingAccesses.write(cache.accesses, to: db)
        let upsert = try db.cachedStatement(sql: Self.upsertSQL)
        for record in cache.records {
            try upsert.execute(arguments: [
                record.key, record.kind, record.job, record.provider, record.model, record.url,
                record.createdAt, record.expiresAt, record.lastAccessAt, record.hits, record.rawBytes,
                record.storedBytes, record.payload, record.etag, record.lastModified, record.reuse,
            ])
        }
        return try Self.evict(db, maxBytes: cache.maxBytes)
    }

    static let upsertSQL = """
        INSERT INTO cache_entries (key, kind, job, provider, model, url, created_at, expires_at, last_access_at,
            hits, raw_bytes, stored_bytes, payload, etag, last_modified, reuse)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (key) DO UPDATE SET kind = excluded.kind, job = excluded.job, provider = excluded.provider,
            model = excluded.model, url = excluded.url, created_at = excluded.created_at,
            expires_at = excluded.expires_at, last_access_at = excluded.last_access_at,
            raw_bytes = excluded.raw_bytes, stored_bytes = excluded.stored_bytes, payload = excluded.payload,
            etag = excluded.etag, last_modified = excluded.last_modified, reuse = excluded.reuse
        """

    /// Deletes least recently used entries (by key among those used at once, byte by byte: the order
    /// both engines evict in, whatever order the rows were written in) until the payloads fit in
    /// `maxBytes`. The payloads' total is the running one (`cache_totals`), so a save under the cap
    /// reads one row, not the cache.
    /// - Returns: how many were deleted.
    static func evict(_ db: Database, maxBytes: Int) throws -> Int {
        var excess = try cacheTotals(db).storedBytes - maxBytes
        guard excess > 0 else { return 0 }
        var victims: [Int64] = []
        let rows = try Row.fetchCursor(
            db, sql: "SELECT rowid, stored_bytes FROM cache_entries ORDER BY last_access_at, key")
        while excess > 0, let row = try rows.next() {
            victims.append(row[0])
            excess -= row[1] as Int
        }
        let delete = try db.cachedStatement(sql: "DELETE FROM cache_entries WHERE rowid = ?")
        for rowid in victims { try delete.execute(arguments: [rowid]) }
        return victims.count
    }

    /// The cache's entries and bytes, as the triggers on `cache_entries` keep them (see
    /// `StoreMigrations.createCacheTotals`); summed over every entry if the row is missing.
    static func cacheTotals(_ db: Database) throws -> (entries: Int, rawBytes: Int, storedBytes: Int) {
        let row =
            try Row.fetchOne(
                db, sql: "SELECT entries, raw_bytes, stored_bytes FROM cache_totals WHERE id = 1")
            ?? Row.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) AS entries, COALESCE(SUM(raw_bytes), 0) AS raw_bytes,
                        COALESCE(SUM(stored_bytes), 0) AS stored_bytes
                    FROM cache_entries
                    """)
        return (row?["entries"] ?? 0, row?["raw_bytes"] ?? 0, row?["stored_bytes"] ?? 0)
    }

    func writeCacheAccesses(_ accesses: PendingAccesses.Batch) throws(OffpeakError) {
        try write { db in try PendingAccesses.write(accesses, to: db) }
    }

    func refreshCacheEntry(key: String, expiresAt: Date, now: Date, accesses: PendingAccesses.Batch)
        throws(OffpeakError)
    {
        defer { CacheLookups.noteWrite() }
        try write { db in
            try PendingAccesses.write(accesses, to: db)
            try db.execute(
                sql: "UPDATE cache_entries SET expires_at = ?, last_access_at = ? WHERE key = ?",
                arguments: [expiresAt, now, key])
        }
    }

    func deleteCacheEntry(key: String, payload: Data) throws(OffpeakError) {
        defer { CacheLookups.noteWrite() }
        try write { db in
            try db.execute(
                sql: "DELETE FROM cache_entries WHERE key = ? AND CAST(payload AS BLOB) = ?",
                arguments: [key, payload])
        }
    }

    /// The size from the running totals, the expired entries and the oldest and newest over
    /// indexes, the counters by day, and what the ledger's cache hits saved (over an index holding
    /// only those rows): each a range read, however big the cache.
    func cacheStats(now: Date, today: LocalDay) throws(OffpeakError) -> CacheStats {
        try read { db in
            let sizes = try Self.cacheTotals(db)
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

    func cacheEntries(job: String?, expiredOnly: Bool, now: Date, limit: Int) throws(OffpeakError)
        -> [CacheEntrySummary]
    {
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
        return try read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map {
                try CacheEntrySummary(row: $0, now: now)
            }
        }
    }

    func cacheEntry(key: String, minPrefix: Int, now: Date) throws(OffpeakError)
        -> (keys: [String], entry: (summary: CacheEntrySummary, payload: Data)?)
    {
        let found = try read { db -> (keys: [String], row: Row?) in
            let exact = "SELECT \(CacheEntryRecord.summaryColumns), payload FROM cache_entries WHERE key = ?"
            if let row = try Row.fetchOne(db, sql: exact, arguments: [key]) { return ([key], row) }
            guard key.count >= minPrefix else { return ([], nil) }
            let keys = try String.fetchAll(
                db,
                sql:
                    "SELECT key FROM cache_entries WHERE substr(key, 1, length(?1)) = ?1 ORDER BY key LIMIT 5",
                arguments: [key])
            guard keys.count == 1 else { return (keys, nil) }
            return (keys, try Row.fetchOne(db, sql: exact, arguments: [keys[0]]))
        }
        guard let row = found.row else { return (found.keys, nil) }
        do {
            return (
                found.keys, (try CacheEntrySummary(row: row, now: now), row["payload"] as Data? ?? Data())
            )
        } catch {
            throw OffpeakError(
                .dataError, "cache entry \(found.keys.first ?? key) is unreadable", cause: "\(error)")
        }
    }
}
