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
                guard
                    let row = try Row.fetchOne(
                        db, sql: CacheLookups.lookupSQL, arguments: [CacheRowID.of(key), now, key])
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
                CacheRowID.of(record.key), record.key, record.kind, record.job, record.provider, record.model,
                record.url,
                record.createdAt, record.expiresAt, record.lastAccessAt, record.hits, record.rawBytes,
                record.storedBytes, record.payload, record.etag, record.lastModified, record.reuse,
            ])
        }
        return try CacheRules.evict(SQLiteConnection(db: db), maxBytes: cache.maxBytes)
    }

    /// Saves an entry under its row id (`CacheRowID`). The one conflict there can be is on the id:
    /// the key's own row is updated, keeping its hits; another key's row with the same id is
    /// replaced by this entry, hits and all (that key is evicted).
    static let upsertSQL = """
        INSERT INTO cache_entries (id, key, kind, job, provider, model, url, created_at, expires_at,
            last_access_at, hits, raw_bytes, stored_bytes, payload, etag, last_modified, reuse)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT DO UPDATE SET key = excluded.key,
            hits = CASE WHEN key = excluded.key THEN hits ELSE excluded.hits END,
            kind = excluded.kind, job = excluded.job, provider = excluded.provider,
            model = excluded.model, url = excluded.url, created_at = excluded.created_at,
            expires_at = excluded.expires_at, last_access_at = excluded.last_access_at,
            raw_bytes = excluded.raw_bytes, stored_bytes = excluded.stored_bytes, payload = excluded.payload,
            etag = excluded.etag, last_modified = excluded.last_modified, reuse = excluded.reuse
        """

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
}
