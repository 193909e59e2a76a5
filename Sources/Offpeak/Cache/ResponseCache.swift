import Foundation
import Logging
import Synchronization

/// The TTL cache in front of every provider call and every source fetch (DESIGN.md, lever 1).
///
/// Entries live in the store (`AnswerCacheStore`), their payloads LZ4-compressed (`CachePayload`).
/// A fresh hit costs one indexed read (on SQLite, on a connection of the cache's own: see
/// `CacheLookups`); its hit count, its last access (for LRU eviction) and the day's counters are
/// written in batches (see `PendingAccesses`). Call `flush()` before the process exits to keep the last of them; deinit
/// does too.
public final class ResponseCache: Sendable {
    let store: Store
    /// The most the payloads may take, compressed; saving beyond it evicts the least recently used.
    let maxBytes: Int
    let logger: Logger
    let pending = Mutex(PendingAccesses())

    public init(store: Store, maxBytes: Int, logger: Logger) {
        self.store = store
        self.maxBytes = maxBytes
        self.logger = logger
    }

    deinit {
        do {
            try flush()
        } catch {
            logger.warning("cache: could not write pending hit counts: \(error)")
        }
    }

    static func sourceKey(_ url: String) -> String { "source:" + SHA256.hex(url) }

    /// A fresh answer (expiring after `now`), or nil.
    ///
    /// Counts a hit or a miss for the local day; a hit also bumps the entry's hits and last access.
    /// A payload that fails to decompress or decode is a miss: logged, the entry deleted.
    public func answer(for key: String, now: Date = Date()) throws(OffpeakError) -> CachedAnswer? {
        let found = try lookup(key, now: now) { payload, fresh in Self.freshAnswer(payload, fresh) }
        return settle(key, found, now: now)
    }

    /// `answer(for:)` of each of `keys`, looked up together (one round trip on a store that is a
    /// server away): the fresh answers found, by key. Each key counts a hit or a miss as
    /// `answer(for:)` does.
    /// - Parameter unchanged: answers past their TTL count too (`reuse: unchanged`): the key is the
    ///   prompt's, so an answer found for it answers a byte-identical prompt.
    func answers(for keys: [String], unchanged: Bool = false, now: Date = Date()) throws(OffpeakError)
        -> [String: CachedAnswer]
    {
        let found = try store.cache.findCacheEntries(keys: keys, now: now) {
            _, payload, fresh -> (Result<CachedAnswer, CachePayload.Failure>, Data)? in
            guard let result = Self.freshAnswer(payload, fresh || unchanged) else { return nil }
            guard case .failure = result else { return (result, Data()) }
            return (result, Data(payload))
        }
        // A key asked again counts again, as a second `answer(for:)` would: a hit, or a miss once
        // the first asking found it missing or unreadable (and deleted it).
        var settled: [String: CachedAnswer?] = [:]
        for key in keys {
            if let earlier = settled[key] {
                count(key: earlier == nil ? nil : key, kind: .answer, hit: earlier != nil, at: now)
            } else {
                settled[key] = .some(settle(key, found[key] ?? nil, now: now))
            }
        }
        return settled.compactMapValues { $0 }
    }

    /// A payload's answer when it is fresh; nil for an entry past its time.
    private static func freshAnswer(_ payload: UnsafeRawBufferPointer, _ fresh: Bool)
        -> Result<CachedAnswer, CachePayload.Failure>?
    {
        fresh
            ? Result { () throws(CachePayload.Failure) in
                try CachePayload.decodeAnswer(from: payload)
            } : nil
    }

    /// What one lookup found, counted (a hit, or a miss) and, when unreadable, deleted.
    private func settle(
        _ key: String, _ found: (Result<CachedAnswer, CachePayload.Failure>, Data)?, now: Date
    )
        -> CachedAnswer?
    {
        switch found {
        case nil:
            count(key: nil, kind: .answer, hit: false, at: now)
            return nil
        case (.success(let answer), _)?:
            count(key: key, kind: .answer, hit: true, at: now)
            return answer
        case (.failure(let error), let payload)?:
            discard(key, payload: payload, kind: .answer, because: error, at: now)
            return nil
        }
    }

    /// Stores answers (kind answer) expiring at `now + ttl`, in one transaction, then evicts the least
    /// recently used entries until the payloads fit in `maxBytes`.
    /// - Parameter reuse: kept past `ttl` for a job with `reuse: unchanged` (`CacheEntryRecord.reuse`).
    public func save(
        answers: [(key: String, answer: CachedAnswer)], job: String, provider: String, ttl: TimeInterval,
        reuse: Bool = false, now: Date = Date()
    ) throws(OffpeakError) {
        try save(
            try records(answers: answers, job: job, provider: provider, ttl: ttl, reuse: reuse, now: now))
    }

    /// `save(answers:…)`'s write, for the transaction that commits the call they answered
    /// (`CallCommit.cache`); `evicted` says afterwards what it evicted. Takes the accesses counted
    /// so far: a commit that fails loses their counts, never an answer.
    func write(
        answers: [(key: String, answer: CachedAnswer)], job: String, provider: String, ttl: TimeInterval,
        reuse: Bool = false, now: Date = Date()
    ) throws(OffpeakError) -> CacheWrite {
        let records = try records(
            answers: answers, job: job, provider: provider, ttl: ttl, reuse: reuse, now: now)
        return CacheWrite(records: records, accesses: pending.withLock { $0.take() }, maxBytes: maxBytes)
    }

    /// The entries of `answers` (kind answer), expiring at `now + ttl`.
    private func records(
        answers: [(key: String, answer: CachedAnswer)], job: String, provider: String, ttl: TimeInterval,
        reuse: Bool, now: Date
    ) throws(OffpeakError) -> [CacheEntryRecord] {
        var records: [CacheEntryRecord] = []
        for (key, answer) in answers {
            let (payload, rawBytes) = try CachePayload.encode(answer)
            records.append(
                CacheEntryRecord(
                    key: key, kind: .answer, job: job, provider: provider, model: answer.model, url: nil,
                    createdAt: now, expiresAt: now + ttl, lastAccessAt: now, hits: 0, rawBytes: rawBytes,
                    storedBytes: payload.count, payload: Data(payload), etag: nil, lastModified: nil,
                    reuse: reuse))
        }
        return records
    }

    /// A source by URL at any age, and whether it is still fresh: a stale one is revalidated with its
    /// ETag or Last-Modified, or used as it is while offline. Counts a hit when fresh, else a miss.
    /// A corrupt payload is nil, logged, the entry deleted.
    func source(url: String, now: Date = Date()) throws(OffpeakError) -> (
        source: CachedSource, fresh: Bool
    )? {
        let key = Self.sourceKey(url)
        let found = try lookup(key, now: now) { payload, fresh in
            Result { () throws(CachePayload.Failure) in
                (try CachePayload.decode(CachedSource.self, from: payload), fresh)
            }
        }
        switch found {
        case nil:
            count(key: nil, kind: .source, hit: false, at: now)
            return nil
        case (.success(let (source, fresh)), _)?:
            count(key: key, kind: .source, hit: fresh, at: now)
            return (source, fresh)
        case (.failure(let error), let payload)?:
            discard(key, payload: payload, kind: .source, because: error, at: now)
            return nil
        }
    }

    /// Stores a fetched source expiring at `now + ttl`, then evicts as `save(answers:)` does.
    /// - Parameter keep: kept past `ttl` for a job with `reuse: unchanged` (`CacheEntryRecord.reuse`).
    func save(source: CachedSource, job: String?, ttl: TimeInterval, keep: Bool = false, now: Date = Date())
        throws(OffpeakError)
    {
        let (frame, rawBytes) = try CachePayload.encodeJSON(source)
        try save([
            CacheEntryRecord(
                key: Self.sourceKey(source.url), kind: .source, job: job, provider: nil, model: nil,
                url: source.url, createdAt: now, expiresAt: now + ttl, lastAccessAt: now, hits: 0,
                rawBytes: rawBytes, storedBytes: frame.count, payload: Data(frame), etag: source.etag,
                lastModified: source.lastModified, reuse: keep)
        ])
    }

    /// After a 304 Not Modified: keeps the payload, fresh again until `now + ttl`.
    func refresh(sourceURL: String, ttl: TimeInterval, now: Date = Date()) throws(OffpeakError) {
        let batch = pending.withLock { $0.take() }
        try store.cache.refreshCacheEntry(
            key: Self.sourceKey(sourceURL), expiresAt: now + ttl, now: now, accesses: batch)
    }

    /// Writes the hits, misses and last accesses counted since the last write.
    public func flush() throws(OffpeakError) {
        let batch = pending.withLock { $0.take() }
        if batch.isEmpty { return }
        try store.cache.writeCacheAccesses(batch)
    }
}
