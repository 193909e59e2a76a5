import Foundation
import NIOCore
import PostgresNIO

/// The answer cache's lookups and writes on PostgreSQL, as the SQLite engine makes them
/// (`SQLiteStore+AnswerCache`, `PendingAccesses.write`); its reports and eviction are written once
/// (`AnswerCacheStore+SQL`).
///
/// Writes take turns under the cache's transaction advisory lock (`lockCache`), as SQLite's one
/// writer makes them: two processes saving at once never both evict for the same excess, and
/// writers touching the same entries never wait on each other's rows in opposite orders. The
/// entries' count and bytes are kept by triggers (`PostgresSchema.version3`).
extension PostgresEngine: AnswerCacheStore {
    func findCacheEntry<T>(
        key: String, now: Date, _ body: (_ payload: UnsafeRawBufferPointer, _ fresh: Bool) -> T
    ) throws(OffpeakError) -> T? {
        guard
            let row = try store.query(
                "SELECT payload, expires_at > \(now) AS fresh FROM cache_entries WHERE key = \(key)"
            ).first
        else { return nil }
        let columns = PostgresColumns(row, store)
        let payload = try columns("payload", as: ByteBuffer.self)
        let fresh = try columns("fresh", as: Bool.self)
        return payload.withUnsafeReadableBytes { body($0, fresh) }
    }

    /// One statement for all of `keys`: each lookup alone would be a round trip to the server.
    func findCacheEntries<T>(
        keys: [String], now: Date,
        _ body: (_ key: String, _ payload: UnsafeRawBufferPointer, _ fresh: Bool) -> T
    ) throws(OffpeakError) -> [String: T] {
        guard !keys.isEmpty else { return [:] }
        let rows = try store.query(
            """
            SELECT key, payload, expires_at > \(now) AS fresh FROM cache_entries
            WHERE key = ANY(\(Array(Set(keys)))::text[])
            """)
        var found: [String: T] = [:]
        for row in rows {
            let columns = PostgresColumns(row, store)
            let key = try columns("key", as: String.self)
            let payload = try columns("payload", as: ByteBuffer.self)
            let fresh = try columns("fresh", as: Bool.self)
            found[key] = payload.withUnsafeReadableBytes { body(key, $0, fresh) }
        }
        return found
    }

    func saveCacheEntries(_ records: [CacheEntryRecord], accesses: PendingAccesses.Batch, maxBytes: Int)
        throws(OffpeakError) -> Int
    {
        let cache = CacheWrite(records: records, accesses: accesses, maxBytes: maxBytes)
        try cache.checkDates()
        return try store.transaction { () throws(OffpeakError) -> Int in try save(cache) }
    }

    /// Writes the accesses and the records under the cache's lock, then evicts, in the transaction
    /// open on the connection (`checkDates` first).
    /// - Returns: how many entries were evicted.
    func save(_ cache: CacheWrite) throws(OffpeakError) -> Int {
        try write(cache)
        return try CacheRules.evict(PostgresSQLConnection(engine: self), maxBytes: cache.maxBytes)
    }

    /// What `save` and `sendSave` write before they evict: the accesses and the records, under the
    /// cache's lock.
    private func write(_ cache: CacheWrite) throws(OffpeakError) {
        try lockCache()
        try writeAccesses(cache.accesses)
        try upsert(CacheEntryRecord.merged(cache.records))
    }

    /// `save` in a transaction sent whole (`startCommit`): the eviction is one statement, whose
    /// rows (one per entry evicted) are read once the transaction is done. It evicts at most a
    /// page of entries; one that took a whole page leaves the rest to `evictRest`.
    func sendSave(_ cache: CacheWrite) throws(OffpeakError) -> PostgresStore.SentRows {
        try write(cache)
        return try store.sendReading(
            """
            WITH total AS (
                SELECT coalesce((SELECT stored_bytes FROM cache_totals WHERE id = 1),
                    (SELECT coalesce(sum(stored_bytes), 0)::bigint FROM cache_entries)) - \(cache.maxBytes) AS excess),
            oldest AS (
                SELECT key, last_access_at, stored_bytes FROM cache_entries
                WHERE (SELECT excess FROM total) > 0
                ORDER BY last_access_at, key COLLATE "C" LIMIT \(CacheRules.evictionPage)),
            victims AS (
                SELECT key FROM (
                    SELECT key, sum(stored_bytes) OVER (ORDER BY last_access_at, key COLLATE "C"
                        ROWS UNBOUNDED PRECEDING) - stored_bytes AS before
                    FROM oldest) o
                WHERE before < (SELECT excess FROM total))
            DELETE FROM cache_entries WHERE key IN (SELECT key FROM victims) RETURNING 1
            """)
    }

    /// Evicts what is still past `maxBytes`, in a transaction of its own.
    /// - Returns: how many entries were evicted.
    func evictRest(maxBytes: Int) throws(OffpeakError) -> Int {
        try store.transaction { () throws(OffpeakError) -> Int in
            try lockCache()
            return try CacheRules.evict(PostgresSQLConnection(engine: self), maxBytes: maxBytes)
        }
    }

    func writeCacheAccesses(_ accesses: PendingAccesses.Batch) throws(OffpeakError) {
        guard !accesses.isEmpty else { return }
        try store.transaction { () throws(OffpeakError) in
            try lockCache()
            try writeAccesses(accesses)
        }
    }

    func refreshCacheEntry(key: String, expiresAt: Date, now: Date, accesses: PendingAccesses.Batch)
        throws(OffpeakError)
    {
        try store.transaction { () throws(OffpeakError) in
            try lockCache()
            try writeAccesses(accesses)
            try store.query(
                "UPDATE cache_entries SET expires_at = \(expiresAt), last_access_at = \(now) WHERE key = \(key)"
            )
        }
    }

    func deleteCacheEntry(key: String, payload: Data) throws(OffpeakError) {
        try store.transaction { () throws(OffpeakError) in
            try lockCache()
            try store.query(
                "DELETE FROM cache_entries WHERE key = \(key) AND payload = \(ByteBuffer(bytes: payload))")
        }
    }

    /// Takes the cache's transaction advisory lock: writes to the cache take turns.
    func lockCache() throws(OffpeakError) {
        try store.send("SELECT pg_advisory_xact_lock(hashtextextended('offpeak cache', 0))")
    }

    /// Writes what lookups counted (`PendingAccesses.write`): each entry's hits and last access, and
    /// the day counters, one statement each.
    private func writeAccesses(_ batch: PendingAccesses.Batch) throws(OffpeakError) {
        if !batch.touches.isEmpty {
            try store.send(
                """
                UPDATE cache_entries e SET hits = e.hits + t.hits, last_access_at = greatest(e.last_access_at, t.at)
                FROM unnest(\(batch.keys)::text[], \(batch.touches.map(\.hits))::bigint[],
                    \(batch.touches.map(\.lastAccessAt))::timestamptz[]) AS t(key, hits, at)
                WHERE e.key = t.key
                """)
        }
        guard !batch.counters.isEmpty else { return }
        let counters = Array(batch.counters)
        try store.send(
            """
            INSERT INTO cache_counters AS c (day, kind, hits, misses)
            SELECT * FROM unnest(\(counters.map(\.key.day))::text[], \(counters.map(\.key.kind.rawValue))::text[],
                \(counters.map(\.value.hits))::bigint[], \(counters.map(\.value.misses))::bigint[])
            ON CONFLICT (day, kind) DO UPDATE SET hits = c.hits + excluded.hits, misses = c.misses + excluded.misses
            """)
    }

    /// Inserts `records`, or replaces the entry with the same key while keeping its hit count, in one
    /// statement (so one record per key: `CacheEntryRecord.merged`). Text that may be absent travels as a value and a
    /// flag: postgres-nio binds no array holding NULL.
    private func upsert(_ records: [CacheEntryRecord]) throws(OffpeakError) {
        guard !records.isEmpty else { return }
        let text = { (value: (CacheEntryRecord) -> String?) in records.map { value($0) ?? "" } }
        let has = { (value: (CacheEntryRecord) -> String?) in records.map { value($0) != nil } }
        try store.send(
            """
            INSERT INTO cache_entries (key, kind, job, provider, model, url, created_at, expires_at, last_access_at,
                hits, raw_bytes, stored_bytes, payload, etag, last_modified, reuse)
            SELECT key, kind, CASE WHEN has_job THEN job END, CASE WHEN has_provider THEN provider END,
                CASE WHEN has_model THEN model END, CASE WHEN has_url THEN url END, created_at, expires_at,
                last_access_at, hits, raw_bytes, stored_bytes, payload, CASE WHEN has_etag THEN etag END,
                CASE WHEN has_modified THEN modified END, reuse
            FROM unnest(\(records.map(\.key))::text[], \(records.map(\.kind.rawValue))::text[],
                \(text { $0.job })::text[], \(has { $0.job })::boolean[],
                \(text { $0.provider })::text[], \(has { $0.provider })::boolean[],
                \(text { $0.model })::text[], \(has { $0.model })::boolean[],
                \(text { $0.url })::text[], \(has { $0.url })::boolean[],
                \(records.map(\.createdAt))::timestamptz[], \(records.map(\.expiresAt))::timestamptz[],
                \(records.map(\.lastAccessAt))::timestamptz[], \(records.map(\.hits))::bigint[],
                \(records.map(\.rawBytes))::bigint[], \(records.map(\.storedBytes))::bigint[],
                \(records.map { ByteBuffer(bytes: $0.payload) })::bytea[],
                \(text { $0.etag })::text[], \(has { $0.etag })::boolean[],
                \(text { $0.lastModified })::text[], \(has { $0.lastModified })::boolean[],
                \(records.map(\.reuse))::boolean[])
                AS r(key, kind, job, has_job, provider, has_provider, model, has_model, url, has_url, created_at,
                    expires_at, last_access_at, hits, raw_bytes, stored_bytes, payload, etag, has_etag, modified,
                    has_modified, reuse)
            ON CONFLICT (key) DO UPDATE SET kind = excluded.kind, job = excluded.job, provider = excluded.provider,
                model = excluded.model, url = excluded.url, created_at = excluded.created_at,
                expires_at = excluded.expires_at, last_access_at = excluded.last_access_at,
                raw_bytes = excluded.raw_bytes, stored_bytes = excluded.stored_bytes, payload = excluded.payload,
                etag = excluded.etag, last_modified = excluded.last_modified, reuse = excluded.reuse
            """)
    }
}
