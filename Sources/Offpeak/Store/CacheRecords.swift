import Foundation
import GRDB

/// What a cache entry holds: a model's answer, or a research source fetched over HTTP.
enum CacheKind: String, Sendable, Codable, CaseIterable {
    case answer, source
}

/// One row of `cache_entries`: an answer or a source, its payload LZ4-compressed (`CachePayload`).
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
    /// The payload's size decompressed (its JSON, or an answer's binary record).
    var rawBytes: Int
    /// The payload's size as stored: what the size cap counts.
    var storedBytes: Int
    var payload: Data
    var etag: String?
    var lastModified: String?
    /// An answer of a job with `reuse: unchanged`: reused while its prompt is unchanged, whatever
    /// its TTL says, so `cache purge --expired` keeps it. A source such a job fetched is kept too:
    /// its ETag / Last-Modified make its next check a `304`, not a whole fetch.
    var reuse = false

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

extension CacheEntryRecord {
    /// What saving `records` one after the other leaves, one record per key: a key given twice is
    /// written as its last record, where its first stood and with its first's hit count (a replaced
    /// entry keeps its hits). For an engine that writes them in one statement, which may touch a row once.
    static func merged(_ records: [CacheEntryRecord]) -> [CacheEntryRecord] {
        var slots: [String: Int] = [:]
        var merged: [CacheEntryRecord] = []
        for record in records {
            if let slot = slots[record.key] {
                var replaced = record
                replaced.hits = merged[slot].hits
                merged[slot] = replaced
            } else {
                slots[record.key] = merged.count
                merged.append(record)
            }
        }
        return merged
    }
}

extension CacheKind: DatabaseValueConvertible {}
