import Foundation
import OffpeakTestSupport
import PostgresNIO
import Testing

@testable import Offpeak

/// What only the PostgreSQL engine's cache can show: version 3 counting a store's entries, and
/// connections saving at once under the cap.
@Suite(.ownThreads) struct PostgresCacheTests {
    typealias F = RoleFixtures

    /// The running totals (`cache_totals`) and a recount of the entries.
    static func totals(_ engine: PostgresEngine) throws -> (kept: [Int], counted: [Int]) {
        let kept = try engine.reading { sql throws(OffpeakError) in try CacheRules.totals(sql) }
        let row = try #require(
            try engine.store.query(
                "SELECT count(*)::bigint, coalesce(sum(raw_bytes), 0)::bigint, coalesce(sum(stored_bytes), 0)::bigint FROM cache_entries"
            ).first)
        let counted = try engine.store.decode(row, as: (Int, Int, Int).self)
        return ([kept.entries, kept.rawBytes, kept.storedBytes], [counted.0, counted.1, counted.2])
    }

    @Test func versionThreeCountsTheEntriesAStoreHoldsAndEvictsThemByItsIndex() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try PostgresMigrations.migrate(store, migrations: Array(PostgresMigrations.all.prefix(2)))
        for key in ["b", "a"] {
            try store.query(
                """
                INSERT INTO cache_entries (key, kind, created_at, expires_at, last_access_at, raw_bytes, stored_bytes,
                    payload)
                VALUES (\(key), 'answer', \(F.t0), \(F.t0 + 60), \(F.t0), 30, 10, '\\x00'::bytea)
                """)
        }
        #expect(try PostgresMigrations.migrate(store) == PostgresMigrations.latest)
        let engine = PostgresEngine(store)
        #expect(try Self.totals(engine).kept == [2, 60, 20])
        let evicted = try engine.saveCacheEntries(
            [AnswerCacheStoreRoleTests.entry("c", at: F.t0 + 5, size: 10)], accesses: PendingAccesses.Batch(),
            maxBytes: 25)
        #expect(evicted == 1)
        #expect(
            try engine.cacheEntries(job: nil, expiredOnly: false, now: F.t0, limit: 5).map(\.key) == [
                "c", "b",
            ],
            "the least key of the two went")
        let totals = try Self.totals(engine)
        #expect(totals.kept == totals.counted)
    }

    @Test func connectionsSavingAtOnceKeepTheCapAndTheTotals() throws {
        let url = try PostgresCluster.shared.makeDatabase()
        let engines = try (0..<4).map { _ in try PostgresEngineTests.engine(url) }
        defer { for engine in engines { engine.store.close() } }
        let saved = PostgresEngineTests.atOnce(engines) { index, engine in
            var evicted = 0
            for round in 0..<10 {
                let records = (0..<3).map { number in
                    AnswerCacheStoreRoleTests.entry(
                        "k\(index)-\(round)-\(number)", at: F.t0 + Double(round), size: 100 + number)
                }
                var pending = PendingAccesses()
                _ = pending.record(
                    key: "k\((index + 1) % 4)-\(round)-0", kind: .answer, hit: true, at: F.t0 + 30)
                evicted += try engine.saveCacheEntries(records, accesses: pending.take(), maxBytes: 1_000)
            }
            return evicted
        }
        let evicted = try saved.map { try $0.get() }.reduce(0, +)
        let totals = try Self.totals(engines[0])
        #expect(totals.kept == totals.counted)
        #expect(totals.kept[0] + evicted == 120, "every entry saved is kept or was evicted once")
        #expect(totals.kept[2] <= 1_000 && totals.kept[2] > 1_000 - 103)
    }
}
