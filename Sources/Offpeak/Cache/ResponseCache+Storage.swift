import Foundation

/// How the cache reads and writes its entries in the store.
extension ResponseCache {
    /// Looks `key` up and lets `decode` read its payload in place, with whether it is fresh at `now`;
    /// `decode` returns nil to treat the entry as absent.
    /// - Returns: nil when there is no entry (or `decode` said so); else what `decode` made of it
    ///   and, when that failed, a copy of the payload (to delete the entry by).
    func lookup<Value>(
        _ key: String, now: Date,
        decode: (_ payload: UnsafeRawBufferPointer, _ fresh: Bool) -> Result<Value, CachePayload.Failure>?
    ) throws(OffpeakError) -> (Result<Value, CachePayload.Failure>, Data)? {
        let found = try store.cache.findCacheEntry(key: key, now: now) {
            payload, fresh -> (Result<Value, CachePayload.Failure>, Data)? in
            guard let result = decode(payload, fresh) else { return nil }
            guard case .failure = result else { return (result, Data()) }
            return (result, Data(payload))
        }
        return found ?? nil
    }

    /// Saves `records` with what was pending, then evicts the least recently used entries past
    /// `maxBytes`, in one transaction.
    func save(_ records: [CacheEntryRecord]) throws(OffpeakError) {
        if records.isEmpty { return try flush() }
        let batch = pending.withLock { $0.take() }
        evicted(try store.cache.saveCacheEntries(records, accesses: batch, maxBytes: maxBytes))
    }

    /// Says at debug (`--verbose`) how many entries a save evicted.
    func evicted(_ count: Int) {
        if count > 0 { logger.debug("cache: evicted \(count) least recently used entries") }
    }

    /// Counts an access, and writes the pending ones when due. A failed write loses counts, never
    /// the lookup: it is logged, not thrown.
    func count(key: String?, kind: CacheKind, hit: Bool, at now: Date) {
        guard let batch = pending.withLock({ $0.record(key: key, kind: kind, hit: hit, at: now) }) else {
            return
        }
        do {
            try store.cache.writeCacheAccesses(batch)
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
            try store.cache.deleteCacheEntry(key: key, payload: payload)
        } catch {
            logger.warning("cache: could not delete unreadable entry \(key): \(error)")
        }
        count(key: nil, kind: kind, hit: false, at: now)
    }
}
