import Foundation

/// What `offpeak cache stats` reports: the cache's size, how often it answered, what it saved.
public struct CacheStats: Codable, Sendable, Equatable {
    public var entries: Int
    public var expiredEntries: Int
    /// The payloads' JSON size, before compression.
    public var rawBytes: Int
    /// What the payloads take on disk, compressed: what the size cap counts.
    public var storedBytes: Int
    /// Since local midnight, answers and sources together.
    public var hitsToday: Int
    public var missesToday: Int
    public var hitsTotal: Int
    public var missesTotal: Int
    /// From the ledger's cache-hit rows: what the hits would have cost, asked alone.
    public var savedDollarsToday: Double
    public var savedDollarsTotal: Double
    /// When the oldest and newest entries were stored.
    public var oldest: Date?
    public var newest: Date?

    /// Raw over stored bytes (how much LZ4 saves), or nil for an empty cache.
    public var compressionRatio: Double? {
        storedBytes > 0 ? Double(rawBytes) / Double(storedBytes) : nil
    }
}

/// One cache entry, without its payload.
public struct CacheEntrySummary: Codable, Sendable, Equatable {
    public var key: String
    public var kind: CacheKind
    public var job: String?
    public var provider: String?
    public var model: String?
    public var url: String?
    public var createdAt: Date
    public var expiresAt: Date
    public var lastAccessAt: Date
    public var hits: Int
    public var rawBytes: Int
    public var storedBytes: Int
    public var expired: Bool
}

/// Which entries `purge` removes.
public enum PurgeScope: Sendable, Equatable {
    /// Entries whose TTL has passed (sources too: a stale source is refetched, not revalidated).
    case expired
    /// Entries stored by one job.
    case job(String)
    case all
}
