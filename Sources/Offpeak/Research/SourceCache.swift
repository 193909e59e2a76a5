import Foundation

/// Where fetched research sources are kept between runs (DESIGN.md, lever 1: sources are cached
/// like answers). `ResponseCache` is the real one; tests use an in-memory one.
///
/// A protocol, not the concrete cache, so `ResearchSources` can be tested without a database and
/// the cache can change its storage without touching the fetching rules.
///
/// Entries past their TTL are not deleted: a stale copy is what research falls back to when the
/// source cannot be reached, and its ETag / Last-Modified make the next check a cheap `304`.
protocol SourceCache: Sendable {
    /// The cached copy of `url`, and whether it is still inside its TTL at `now`; `nil` when the
    /// source was never fetched (or was evicted).
    func source(url: String, now: Date) throws(OffpeakError) -> (source: CachedSource, fresh: Bool)?

    /// Stores a newly fetched copy, replacing any older one; fresh for `ttl` seconds from `now`.
    /// - Parameters:
    ///   - job: the job that fetched it, for `offpeak cache stats`; `nil` when none.
    ///   - keep: kept past `ttl` by `cache purge --expired` (and the tick's purge), for a job with
    ///     `reuse: unchanged`: its validators make the next check a `304`, not a whole fetch.
    func save(source: CachedSource, job: String?, ttl: TimeInterval, keep: Bool, now: Date)
        throws(OffpeakError)

    /// Marks the cached copy fresh again for `ttl` seconds from `now`, after the server answered
    /// `304 Not Modified`; the text stays as it is.
    func refresh(sourceURL: String, ttl: TimeInterval, now: Date) throws(OffpeakError)
}
