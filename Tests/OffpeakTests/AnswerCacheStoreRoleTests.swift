import Foundation
import Testing

@testable import Offpeak

/// `AnswerCacheStore`, the same scenarios on both engines (`StoreEngine`): entries saved, found fresh
/// or expired, replaced, touched, refreshed, deleted and evicted, the day counters, and what
/// `cache stats|ls|show|purge` read. Payloads are opaque bytes here (the cache compresses them).
struct AnswerCacheStoreRoleTests {
    typealias F = RoleFixtures

    /// An entry saved at `at`, fresh for `ttl`, whose payload is `size` bytes of `fill`.
    static func entry(
        _ key: String, job: String? = "j", kind: CacheKind = .answer, at: Date = F.t0,
        ttl: TimeInterval = 3_600,
        size: Int = 100, fill: UInt8 = 7
    ) -> CacheEntryRecord {
        CacheEntryRecord(
            key: key, kind: kind, job: job, provider: kind == .answer ? "sim" : nil,
            model: kind == .answer ? "m" : nil, url: kind == .source ? "https://example.org/\(key)" : nil,
            createdAt: at, expiresAt: at + ttl, lastAccessAt: at, hits: 0, rawBytes: size * 3,
            storedBytes: size,
            payload: Data(repeating: fill, count: size), etag: kind == .source ? "\"v1\"" : nil,
            lastModified: nil)
    }

    /// What `findCacheEntry` hands its body, copied out.
    static func find(_ cache: any AnswerCacheStore, _ key: String, at now: Date) throws -> ([UInt8], Bool)? {
        try cache.findCacheEntry(key: key, now: now) { payload, fresh in (Array(payload), fresh) }
    }

    /// Accesses as a cache counts them: a hit or miss of `kind` per key (nil: a miss with no entry).
    static func accesses(_ list: [(key: String?, hit: Bool, at: Date)], kind: CacheKind = .answer)
        -> PendingAccesses.Batch
    {
        var pending = PendingAccesses()
        for access in list { _ = pending.record(key: access.key, kind: kind, hit: access.hit, at: access.at) }
        return pending.take()
    }

    static func save(_ roles: StoreRoles, _ records: [CacheEntryRecord], maxBytes: Int = 1 << 30) throws
        -> Int
    {
        try roles.cache.saveCacheEntries(records, accesses: PendingAccesses.Batch(), maxBytes: maxBytes)
    }

    /// Many keys looked up at once find what each lookup alone finds: every entry there (fresh or
    /// not) once, by key, whatever repeats or misses the list holds.
    @Test(arguments: StoreEngine.allCases)
    func manyKeysAtOnceFindWhatEachFindsAlone(engine: StoreEngine) throws {
        let roles = try engine.roles()
        _ = try Self.save(
            roles, [Self.entry("a", ttl: 100), Self.entry("b", size: 50, fill: 1), Self.entry("c")])
        let keys = ["b", "missing", "a", "b", "c"]
        let now = F.t0 + 200
        let found = try roles.cache.findCacheEntries(keys: keys, now: F.t0 + 50) { key, payload, fresh in
            (key, Array(payload), fresh)
        }
        #expect(found.keys.sorted() == ["a", "b", "c"])
        for key in ["a", "b", "c"] {
            let alone = try #require(try Self.find(roles.cache, key, at: F.t0 + 50))
            #expect(found[key]?.0 == key && found[key]?.1 == alone.0 && found[key]?.2 == alone.1)
        }
        let later = try roles.cache.findCacheEntries(keys: keys, now: now) { _, _, fresh in fresh }
        #expect(later == ["a": false, "b": true, "c": true])
        #expect(try roles.cache.findCacheEntries(keys: [], now: now) { _, _, fresh in fresh }.isEmpty)
    }

    @Test(arguments: StoreEngine.allCases)
    func anEntryIsFoundFreshUntilItExpiresAndReplacedKeepingItsHits(engine: StoreEngine) throws {
        let roles = try engine.roles()
        #expect(try Self.save(roles, [Self.entry("a", ttl: 100), Self.entry("b", size: 50, fill: 1)]) == 0)
        let fresh = try #require(try Self.find(roles.cache, "a", at: F.t0 + 99))
        #expect(fresh.0 == [UInt8](repeating: 7, count: 100) && fresh.1)
        #expect(try Self.find(roles.cache, "a", at: F.t0 + 100)?.1 == false, "expired at its time exactly")
        #expect(
            try Self.find(roles.cache, "a", at: F.t0 + 101)?.0.count == 100, "an expired entry is still there"
        )
        #expect(try Self.find(roles.cache, "missing", at: F.t0) == nil)

        try roles.cache.writeCacheAccesses(
            Self.accesses([("a", true, F.t0 + 10), ("a", true, F.t0 + 20), (nil, false, F.t0 + 30)]))
        var replaced = Self.entry("a", at: F.t0 + 40, size: 60, fill: 9)
        replaced.etag = "\"v2\""
        #expect(try Self.save(roles, [replaced]) == 0)
        let found = try roles.cache.cacheEntry(key: "a", minPrefix: 8, now: F.t0 + 50)
        let entry = try #require(found.entry)
        #expect(found.keys == ["a"])
        #expect(entry.summary.hits == 2, "a replaced entry keeps its hits")
        #expect(entry.summary.createdAt == F.t0 + 40 && entry.summary.storedBytes == 60)
        #expect(entry.summary.lastAccessAt == F.t0 + 40)
        #expect(entry.payload == Data(repeating: 9, count: 60))
        let stats = try roles.cache.cacheStats(now: F.t0 + 50, today: LocalDay(containing: F.t0 + 50))
        #expect(stats.entries == 2 && stats.storedBytes == 110 && stats.rawBytes == 330)
        #expect(stats.hitsTotal == 2 && stats.missesTotal == 1)

        // Two items asking the same thing save one key twice in one batch: the last is kept.
        #expect(
            try Self.save(
                roles, [Self.entry("c", fill: 1), Self.entry("b", size: 20), Self.entry("c", size: 30)]) == 0)
        #expect(try Self.find(roles.cache, "c", at: F.t0)?.0 == [UInt8](repeating: 7, count: 30))
        #expect(try Self.find(roles.cache, "b", at: F.t0)?.0.count == 20)
        let after = try roles.cache.cacheStats(now: F.t0 + 50, today: LocalDay(containing: F.t0 + 50))
        #expect(after.entries == 3 && after.storedBytes == 110)
    }

    @Test(arguments: StoreEngine.allCases)
    func theLeastRecentlyUsedGoFirstAndAmongThemTheLeastKey(engine: StoreEngine) throws {
        let roles = try engine.roles()
        // Saved in one batch at one time; the order they are written in does not matter.
        let first = ["d", "c", "b", "a"].map { Self.entry($0) }
        #expect(try Self.save(roles, first) == 0)
        try roles.cache.writeCacheAccesses(Self.accesses([("a", true, F.t0 + 10), ("b", true, F.t0 + 11)]))
        // 600 bytes in 550: one entry goes, the least key of the two used least recently.
        let evicted = try roles.cache.saveCacheEntries(
            [Self.entry("f", at: F.t0 + 20), Self.entry("e", at: F.t0 + 20)],
            accesses: Self.accesses([("e", false, F.t0 + 20)]), maxBytes: 550)
        #expect(evicted == 1)
        let kept = try roles.cache.cacheEntries(job: nil, expiredOnly: false, now: F.t0 + 20, limit: 10)
        #expect(kept.map(\.key) == ["e", "f", "b", "a", "d"], "most recently used first, then by key")
        // Saving past the cap again, with an access that makes "d" the most recent: "e" goes before
        // "f", used at the same time.
        let more = try roles.cache.saveCacheEntries(
            [Self.entry("g", at: F.t0 + 30, size: 300)], accesses: Self.accesses([("d", true, F.t0 + 40)]),
            maxBytes: 550)
        #expect(more == 3)
        let left = try roles.cache.cacheEntries(job: nil, expiredOnly: false, now: F.t0 + 40, limit: 10)
        #expect(left.map(\.key) == ["d", "g", "f"])
        let stats = try roles.cache.cacheStats(now: F.t0 + 40, today: LocalDay(containing: F.t0 + 40))
        #expect(stats.entries == 3 && stats.storedBytes == 500 && stats.rawBytes == 1_500)
        #expect(try Self.save(roles, [], maxBytes: 0) == 3, "a save with nothing new evicts too")
        #expect(try roles.cache.cacheStats(now: F.t0, today: LocalDay(containing: F.t0)).storedBytes == 0)
    }

    @Test(arguments: StoreEngine.allCases)
    func aSourceIsRefreshedAndAnUnreadablePayloadDeletedOnlyIfUnchanged(engine: StoreEngine) throws {
        let roles = try engine.roles()
        #expect(try Self.save(roles, [Self.entry("s", job: nil, kind: .source, ttl: 60)]) == 0)
        #expect(try Self.find(roles.cache, "s", at: F.t0 + 61)?.1 == false)
        try roles.cache.refreshCacheEntry(
            key: "s", expiresAt: F.t0 + 121, now: F.t0 + 61,
            accesses: Self.accesses([("s", false, F.t0 + 61)], kind: .source))
        #expect(try Self.find(roles.cache, "s", at: F.t0 + 100)?.1 == true)
        let entry = try #require(try roles.cache.cacheEntry(key: "s", minPrefix: 8, now: F.t0 + 100).entry)
        #expect(entry.summary.kind == .source && entry.summary.url == "https://example.org/s")
        #expect(entry.summary.job == nil && entry.summary.provider == nil)
        #expect(entry.summary.expiresAt == F.t0 + 121 && entry.summary.lastAccessAt == F.t0 + 61)
        let stats = try roles.cache.cacheStats(now: F.t0 + 100, today: LocalDay(containing: F.t0 + 100))
        #expect(stats.missesTotal == 1 && stats.hitsTotal == 0)

        // Another process replaced the payload meanwhile: that one stays.
        try roles.cache.deleteCacheEntry(key: "s", payload: Data(repeating: 1, count: 100))
        #expect(try Self.find(roles.cache, "s", at: F.t0) != nil)
        try roles.cache.deleteCacheEntry(key: "s", payload: Data(repeating: 7, count: 100))
        #expect(try Self.find(roles.cache, "s", at: F.t0) == nil)
        #expect(try roles.cache.cacheStats(now: F.t0, today: LocalDay(containing: F.t0)).entries == 0)
    }

    @Test(arguments: StoreEngine.allCases)
    func statsCountTheDaysAndWhatTheLedgersCacheHitsSaved(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let today = LocalDay(containing: F.t0 + 86_400)
        _ = try Self.save(
            roles, [Self.entry("a", ttl: 60), Self.entry("b", at: F.t0 + 30, ttl: 200_000, size: 40)])
        try roles.cache.writeCacheAccesses(
            Self.accesses([
                ("a", true, F.t0), (nil, false, F.t0), ("a", true, today.start), ("b", true, today.start),
            ]))
        try roles.cache.writeCacheAccesses(Self.accesses([(nil, false, today.start + 1)], kind: .source))
        try roles.runs.insert(run: F.run("r1"), requests: [])
        let run = try #require(try roles.runs.run(id: "r1"))
        for (at, hit, dollars, naive) in [
            (today.start + 5, true, 0.0, 0.25), (today.start + 6, true, 0.0, 0.125), (F.t0, true, 0.0, 0.5),
            (today.start + 7, false, 0.5, 1.0),
        ] {
            try roles.runs.commitCall(
                run: run,
                ledger: LedgerStoreRoleTests.call(
                    run: "r1", at: at, dollars: dollars, naive: naive, cacheHit: hit),
                results: [])
        }
        let stats = try roles.cache.cacheStats(now: F.t0 + 86_400, today: today)
        #expect(
            stats
                == CacheStats(
                    entries: 2, expiredEntries: 1, rawBytes: 420, storedBytes: 140, hitsToday: 2,
                    missesToday: 1,
                    hitsTotal: 3, missesTotal: 2, savedDollarsToday: 0.375, savedDollarsTotal: 0.875,
                    oldest: F.t0, newest: F.t0 + 30))
        let empty = try engine.roles()
        #expect(
            try empty.cache.cacheStats(now: F.t0, today: LocalDay(containing: F.t0))
                == CacheStats(
                    entries: 0, expiredEntries: 0, rawBytes: 0, storedBytes: 0, hitsToday: 0, missesToday: 0,
                    hitsTotal: 0, missesTotal: 0, savedDollarsToday: 0, savedDollarsTotal: 0, oldest: nil,
                    newest: nil))
    }

    @Test(arguments: StoreEngine.allCases)
    func entriesAreListedFoundByPrefixAndPurgedByScope(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let keys = ["abcdef0123456789", "abcdef0199999999", "ffff0000aaaabbbb", "Zeta0000", "zeta0000"]
        _ = try Self.save(
            roles,
            keys.enumerated().map { index, key in
                Self.entry(
                    key, job: index.isMultiple(of: 2) ? "even" : "odd", at: F.t0 + Double(index), ttl: 100)
            })
        _ = try Self.save(roles, [Self.entry("old", job: nil, ttl: 10)])
        let listed = try roles.cache.cacheEntries(job: nil, expiredOnly: false, now: F.t0 + 50, limit: 10)
        #expect(listed.map(\.key) == keys.reversed() + ["old"])
        #expect(listed.map(\.expired) == [false, false, false, false, false, true])
        #expect(
            try roles.cache.cacheEntries(job: "even", expiredOnly: false, now: F.t0, limit: 10).map(\.key)
                == [keys[4], keys[2], keys[0]])
        #expect(try roles.cache.cacheEntries(job: nil, expiredOnly: false, now: F.t0, limit: 2).count == 2)
        #expect(
            try roles.cache.cacheEntries(job: nil, expiredOnly: true, now: F.t0 + 50, limit: 10).map(\.key)
                == ["old"])
        #expect(
            try roles.cache.cacheEntries(job: "odd", expiredOnly: true, now: F.t0 + 50, limit: 10).isEmpty)

        let exact = try roles.cache.cacheEntry(key: keys[2], minPrefix: 8, now: F.t0)
        #expect(exact.keys == [keys[2]] && exact.entry?.summary.key == keys[2])
        let prefix = try roles.cache.cacheEntry(key: "abcdef012", minPrefix: 8, now: F.t0)
        #expect(prefix.keys == [keys[0]] && prefix.entry?.summary.job == "even")
        #expect(prefix.entry?.payload == Data(repeating: 7, count: 100))
        let ambiguous = try roles.cache.cacheEntry(key: "abcdef01", minPrefix: 8, now: F.t0)
        #expect(ambiguous.keys == [keys[0], keys[1]] && ambiguous.entry == nil)
        #expect(try roles.cache.cacheEntry(key: "zeta", minPrefix: 8, now: F.t0).keys.isEmpty, "too short")
        #expect(try roles.cache.cacheEntry(key: "zeta000", minPrefix: 4, now: F.t0).keys == ["zeta0000"])
        #expect(try roles.cache.cacheEntry(key: "00000000", minPrefix: 8, now: F.t0).keys.isEmpty)

        try roles.cache.writeCacheAccesses(Self.accesses([(keys[0], true, F.t0 + 60)]))
        #expect(try roles.cache.purgeCache(.expired, now: F.t0 + 50).removed == 1)
        #expect(try roles.cache.purgeCache(.job("odd"), now: F.t0).removed == 2)
        #expect(try roles.cache.purgeCache(.job("nobody"), now: F.t0).removed == 0)
        #expect(try roles.cache.purgeCache(.all, now: F.t0).removed == 3)
        let stats = try roles.cache.cacheStats(now: F.t0, today: LocalDay(containing: F.t0))
        #expect(stats.entries == 0 && stats.storedBytes == 0 && stats.oldest == nil)
        #expect(stats.hitsTotal == 1, "the day counters stay")
    }
}
