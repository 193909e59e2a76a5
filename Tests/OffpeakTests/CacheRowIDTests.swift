import Foundation
import Testing

@testable import Offpeak

/// The SQLite cache table's row ids (`CacheRowID`): FNV-1a of the key, and what happens when two
/// keys share one.
struct CacheRowIDTests {
    typealias Entries = AnswerCacheStoreRoleTests
    typealias F = RoleFixtures

    /// Two keys with one FNV-1a id (found with Pollard's rho): 0x3ff74e522de530b1.
    static let colliding = ("c5bde799c2362419", "a1a9a9bf38687075")

    /// The published FNV-1a (64 bits) test vectors: the ids are stored, so the function is fixed.
    @Test func theIDIsFNV1aOfTheKeysUTF8() {
        let vectors: [(String, UInt64)] = [
            ("", 0xcbf2_9ce4_8422_2325), ("a", 0xaf63_dc4c_8601_ec8c), ("foobar", 0x8594_4171_f739_67e8),
        ]
        for (key, hash) in vectors {
            #expect(CacheRowID.of(key) == Int64(bitPattern: hash), "\(key)")
        }
        #expect(CacheRowID.of(Self.colliding.0) == CacheRowID.of(Self.colliding.1))
        #expect(CacheRowID.of(Self.colliding.0) == Int64(bitPattern: 0x3ff7_4e52_2de5_30b1))
    }

    /// Saving a key whose id another key holds replaces that entry (as evicting it would): the
    /// other key then misses, never finds this one's payload, and the totals count one entry.
    /// Saving the same key again keeps its hits.
    @Test(.sqliteOnly) func aKeyWhoseIDIsTakenReplacesThatEntry() throws {
        let roles = try StoreEngine.sqlite.roles()
        let (first, second) = Self.colliding
        _ = try Entries.save(roles, [Entries.entry(first, size: 100, fill: 1)])
        try roles.cache.writeCacheAccesses(Entries.accesses([(first, true, F.t0 + 1)]))
        _ = try Entries.save(roles, [Entries.entry(first, size: 120, fill: 2)])
        let kept = try roles.cache.cacheEntry(key: first, minPrefix: 64, now: F.t0 + 2)
        #expect(kept.entry?.summary.hits == 1)

        _ = try Entries.save(roles, [Entries.entry(second, size: 300, fill: 3)])
        #expect(try Entries.find(roles.cache, first, at: F.t0 + 2) == nil)
        let found = try #require(try Entries.find(roles.cache, second, at: F.t0 + 2))
        #expect(found.0 == [UInt8](repeating: 3, count: 300) && found.1)
        let replaced = try roles.cache.cacheEntry(key: second, minPrefix: 64, now: F.t0 + 2)
        #expect(replaced.entry?.summary.hits == 0)
        let stats = try roles.cache.cacheStats(now: F.t0 + 2, today: LocalDay(containing: F.t0 + 2))
        #expect(stats.entries == 1 && stats.storedBytes == 300 && stats.rawBytes == 900)

        _ = try Entries.save(roles, [Entries.entry(first, size: 50, fill: 4)])
        #expect(try Entries.find(roles.cache, second, at: F.t0 + 2) == nil)
        #expect(try Entries.find(roles.cache, first, at: F.t0 + 2)?.0 == [UInt8](repeating: 4, count: 50))
    }
}
