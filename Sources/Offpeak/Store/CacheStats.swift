import Foundation

/// What `offpeak cache stats` reports: the cache's size, how often it answered, what it saved.
public struct CacheStats: Codable, Sendable, Equatable {
    var entries: Int
    var expiredEntries: Int
    /// The payloads' JSON size, before compression.
    public var rawBytes: Int
    /// What the payloads take on disk, compressed: what the size cap counts.
    public var storedBytes: Int
    /// Since local midnight, answers and sources together.
    var hitsToday: Int
    var missesToday: Int
    public var hitsTotal: Int
    var missesTotal: Int
    /// From the ledger's cache-hit rows: what the hits would have cost, asked alone.
    var savedDollarsToday: Double
    var savedDollarsTotal: Double
    /// When the oldest and newest entries were stored.
    var oldest: Date?
    var newest: Date?

    /// Raw over stored bytes (how much LZ4 saves), or nil for an empty cache.
    var compressionRatio: Double? {
        storedBytes > 0 ? Double(rawBytes) / Double(storedBytes) : nil
    }
}

/// One cache entry, without its payload.
public struct CacheEntrySummary: Codable, Sendable, Equatable {
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
    var rawBytes: Int
    var storedBytes: Int
    var expired: Bool
}

/// Which entries `purge` removes.
public enum PurgeScope: Sendable, Equatable {
    /// Entries whose TTL has passed (sources too: a stale source is refetched, not revalidated).
    case expired
    /// Entries stored by one job.
    case job(String)
    case all
}
