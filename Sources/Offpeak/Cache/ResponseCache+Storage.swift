import Foundation
import GRDB

/// How the cache reads and writes its table.
extension ResponseCache {
    /// Looks `key` up and lets `decode` read its payload in place, with whether it is fresh at `now`;
    /// `decode` returns nil to treat the entry as absent.
    /// - Returns: nil when there is no entry (or `decode` said so); else what `decode` made of it
    ///   and, when that failed, a copy of the payload (to delete the entry by).
    func lookup<Value>(
        _ key: String, now: Date,
        decode: (_ payload: UnsafeRawBufferPointer, _ fresh: Bool) -> Result<Value, CachePayload.Failure>?
    ) throws(OffpeakError) -> (Result<Value, CachePayload.Failure>, Data)? {
        func body(_ found: CacheLookups.Found) -> (Result<Value, CachePayload.Failure>, Data)? {
            guard let result = decode(found.payload, found.fresh) else { return nil }
            guard case .failure = result else { return (result, Data()) }
            return (result, Data(found.payload))
        }
        do {
            if let lookups { return try lookups.find(key, now: now, body) ?? nil }
            return try store.sqlite.pool.read { db in
                guard
                    let row = try Row.fetchOne(
                        db, sql: CacheLookups.lookupSQL, arguments: [key, now])
                else { return nil }
                let payload = row[0] as Data? ?? Data()
                let fresh = row[1] as Bool? ?? false
                return payload.withUnsafeBytes { body(CacheLookups.Found(payload: $0, fresh: fresh)) }
            }
        } catch {
            throw SQLiteStore.failure(error)
        }
    }

    /// Upserts `records` and evicts, with what was pending, in one transaction.
    ///
    /// A run saves after every call, so this is one prepared statement per entry: an entry already
    /// there is replaced but keeps its hit count (as `CacheEntryRecord.save` does, without encoding
    /// the record through Codable and decoding it back).
    func save(_ records: [CacheEntryRecord]) throws(OffpeakError) {
        if records.isEmpty { return try flush() }
        for record in records { try StoredDate.check(record) }
        let batch = pending.withLock { $0.take() }
        let evicted = try store.sqlite.write { db in
            try PendingAccesses.write(batch, to: db)
            let upsert = try db.cachedStatement(sql: Self.upsertSQL)
            for record in records {
                try upsert.execute(arguments: [
                    record.key, record.kind, record.job, record.provider, record.model, record.url,
                    record.createdAt, record.expiresAt, record.lastAccessAt, record.hits, record.rawBytes,
                    record.storedBytes, record.payload, record.etag, record.lastModified,
                ])
            }
            return try evict(db)
        }
        CacheLookups.noteWrite()
        if evicted > 0 { logger.debug("cache: evicted \(evicted) least recently used entries") }
    }

    static let upsertSQL = """
        INSERT INTO cache_entries (key, kind, job, provider, model, url, created_at, expires_at, last_access_at,
            hits, raw_bytes, stored_bytes, payload, etag, last_modified)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (key) DO UPDATE SET kind = excluded.kind, job = excluded.job, provider = excluded.provider,
            model = excluded.model, url = excluded.url, created_at = excluded.created_at,
            expires_at = excluded.expires_at, last_access_at = excluded.last_access_at,
            raw_bytes = excluded.raw_bytes, stored_bytes = excluded.stored_bytes, payload = excluded.payload,
            etag = excluded.etag, last_modified = excluded.last_modified
        """

    /// Deletes least recently used entries until the payloads fit in `maxBytes`. The payloads' total
    /// is the running one (`cache_totals`), so a save under the cap reads one row, not the cache.
    /// - Returns: how many were deleted.
    func evict(_ db: Database) throws -> Int {
        var excess = try ResponseCache.totals(db).storedBytes - maxBytes
        guard excess > 0 else { return 0 }
        var victims: [Int64] = []
        let rows = try Row.fetchCursor(
            db, sql: "SELECT rowid, stored_bytes FROM cache_entries ORDER BY last_access_at, rowid")
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
    static func totals(_ db: Database) throws -> (entries: Int, rawBytes: Int, storedBytes: Int) {
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

    /// Counts an access, and writes the pending ones when due. A failed write loses counts, never
    /// the lookup: it is logged, not thrown.
    func count(key: String?, kind: CacheKind, hit: Bool, at now: Date) {
        guard let batch = pending.withLock({ $0.record(key: key, kind: kind, hit: hit, at: now) }) else {
            return
        }
        do {
            try store.sqlite.write { db in try PendingAccesses.write(batch, to: db) }
        } catch {
            logger.warning("cache: could not write hit counts: \(error)")
        }
    }

    /// A payload that cannot be read is a miss: the entry is deleted (unless it was replaced
    /// meanwhile). A failed delete is logged; the lookup is still just a miss.
    func discard(
        _ key: String, payload: Data, kind: CacheKind, because error: CachePayload.Failure, at now: Date
    ) {
        logger.warning("cache: entry \(key) is unreadable (\(error)); deleting it")
        do {
            try store.sqlite.write { db in
                try db.execute(
                    sql: "DELETE FROM cache_entries WHERE key = ? AND CAST(payload AS BLOB) = ?",
                    arguments: [key, payload])
            }
            CacheLookups.noteWrite()
        } catch {
            logger.warning("cache: could not delete unreadable entry \(key): \(error)")
        }
        count(key: nil, kind: kind, hit: false, at: now)
    }
}
