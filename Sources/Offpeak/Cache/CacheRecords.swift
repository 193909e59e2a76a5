import Foundation
import GRDB

/// One row of `cache_entries`: an answer or a source, its payload the LZ4 frame of its JSON.
struct CacheEntryRecord: StoredRecord {
    static let databaseTableName = "cache_entries"

    var key: String
    var kind: CacheKind
    var job: String?
    var provider: String?
    var model: String?
    var url: String?
    var createdAt: Date
    var expiresAt: Date
    var lastAccessAt: Date
    var hits: Int
    /// The JSON's size before compression.
    var rawBytes: Int
    /// The frame's size: what the size cap counts.
    var storedBytes: Int
    var payload: Data
    var etag: String?
    var lastModified: String?

    /// Every column but the payload, for listing without reading every blob.
    static let summaryColumns = """
        key, kind, job, provider, model, url, created_at, expires_at, last_access_at, hits, raw_bytes,
        stored_bytes
        """

    /// Inserts, or replaces an entry with the same key while keeping its hit count.
    mutating func save(_ db: Database) throws {
        _ = try upsertAndFetch(db, onConflict: ["key"]) { _ in [Column("hits").noOverwrite] }
    }
}

extension CacheKind: DatabaseValueConvertible {}

extension CacheEntrySummary {
    /// A summary from a row holding `CacheEntryRecord.summaryColumns`.
    init(row: Row, now: Date) {
        let expiresAt: Date = row["expires_at"]
        self.init(
            key: row["key"], kind: row["kind"], job: row["job"], provider: row["provider"],
            model: row["model"], url: row["url"], createdAt: row["created_at"], expiresAt: expiresAt,
            lastAccessAt: row["last_access_at"], hits: row["hits"], rawBytes: row["raw_bytes"],
            storedBytes: row["stored_bytes"], expired: expiresAt <= now)
    }
}
