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
    /// Entries whose TTL has passed (sources too: a stale source is refetched, not revalidated),
    /// but for the answers kept for reuse (`CacheEntryRecord.reuse`): a job with `reuse: unchanged`
    /// asks again for them only when their prompt changes.
    case expired
    /// Entries stored by one job.
    case job(String)
    case all
}

/// What `purge` removed, and what it kept that its scope might seem to cover.
public struct CachePurge: Sendable, Equatable, Encodable {
    public var removed: Int
    /// Answers past their TTL that `.expired` kept, since a job with `reuse: unchanged` reuses them
    /// while their prompt is unchanged; 0 for the other scopes.
    public var keptForReuse: Int
    /// Sources past their TTL that `.expired` kept, since such a job revalidates them: their ETag /
    /// Last-Modified make the next check a `304`; 0 for the other scopes.
    public var keptSources: Int

    public init(removed: Int, keptForReuse: Int = 0, keptSources: Int = 0) {
        self.removed = removed
        self.keptForReuse = keptForReuse
        self.keptSources = keptSources
    }

    enum CodingKeys: String, CodingKey {
        case removed
        case keptForReuse = "kept_for_reuse"
        case keptSources = "kept_sources"
    }

    /// `removed 3 entries`, and what was kept and how to remove it too.
    public var text: String {
        var line = "removed \(Plural.count(removed, "entry", "entries"))"
        var kept: [String] = []
        if keptForReuse > 0 {
            kept.append(
                "\(Plural.count(keptForReuse, "answer")) that they reuse while their prompt is unchanged")
        }
        if keptSources > 0 {
            kept.append(
                "\(Plural.count(keptSources, "source")) that they revalidate with a conditional request")
        }
        if !kept.isEmpty {
            line +=
                "; kept past their TTL for jobs with `reuse: unchanged`: \(kept.joined(separator: ", and "))"
                + " (`--job JOB` or `--all` removes them)"
        }
        return line + "\n"
    }
}
