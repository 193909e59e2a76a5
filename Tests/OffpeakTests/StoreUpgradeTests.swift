import Foundation
import GRDB
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// v6 on a store that already holds work, and the cache's running byte total.
@Suite(.ownThreads) struct StoreUpgradeTests {
    static let v5 = "v5: spool entries not taken"

    /// A store as offpeak 0.5 (schema v5) left it: two runs with answered, failed, cached and step
    /// requests, their ledger rows (one with no run), and three cache entries.
    static func makeV5Store(at url: URL) throws {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: url.path)
        try StoreMigrations.migrator.migrate(queue, upTo: v5)
        try queue.write { db in
            for run in ["r1", "r2"] { try StoreTests.run(run).insert(db) }
            let rows: [(id: String, run: String, source: String, state: String, cached: Bool?)] = [
                ("a", "r1", "spec", "done", false), ("b", "r1", "spec", "done", true),
                ("c", "r1", "spec", "failed", nil), ("d", "r1", "spec", "pending", nil),
                ("e", "r1", "chunk", "done", true), ("f", "r1", "reduce", "failed", nil),
                ("g", "r2", "submit", "pending", nil), ("h", "r2", "submit", "retrying", nil),
            ]
            for (index, row) in rows.enumerated() {
                var request = StoreTests.request(row.id, run: row.run, position: index)
                request.id = row.id
                request.source = RequestSource(rawValue: row.source) ?? .spec
                request.state = RequestRecord.State(rawValue: row.state) ?? .pending
                try request.insertBeforeSources(db)
                if let cached = row.cached {
                    try StoreCountersTests.result(request, cached: cached).insertBeforeCitations(db)
                }
            }
            let dollars = [0.1, 0.2, 0.000_3, 1e-9, 7.25]
            for (index, amount) in dollars.enumerated() {
                var entry = StoreCountersTests.ledger(
                    run: index == 4 ? "r2" : "r1", items: index + 1, hit: index == 1, failed: index == 3,
                    dollars: amount)
                if index == 2 { entry.runId = nil }
                try entry.insertBeforeHosts(db)
            }
            for (index, size) in [100, 250, 4000].enumerated() {
                try db.execute(
                    sql: """
                        INSERT INTO cache_entries (key, kind, created_at, expires_at, last_access_at, raw_bytes,
                            stored_bytes, payload) VALUES (?, 'answer', ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: ["k\(index)", Date(), Date() + 60, Date(), size * 2, size, Data(count: size)])
            }
        }
        try queue.close()
    }

    @Test func upgradingAStoreMadeBeforeV6CountsWhatItAlreadyHolds() throws {
        let workspace = try TemporaryWorkspace()
        let url = Workspace(root: workspace.root).databaseURL
        try Self.makeV5Store(at: url)
        let store = try Store(url: url)
        let (r1, r2) = try store.sqlite.read { db in
            (try SQLiteStore.itemCounts(db, runID: "r1"), try SQLiteStore.itemCounts(db, runID: "r2"))
        }
        #expect(r1 == ItemCounts(requests: 6, total: 4, done: 2, failed: 1, cached: 1))
        #expect(r2 == ItemCounts(requests: 2, total: 2, done: 0, failed: 0, cached: 0))
        for run in ["r1", "r2"] {
            #expect(try store.ledger.spend(runID: run) == store.ledger.recountSpend(runID: run))
        }
        let spend = try store.ledger.spend(runID: "r1")
        #expect(spend.calls == 2 && spend.failedCalls == 1 && spend.unpricedCalls == 0)
        #expect(spend.dollars == 0.1 + 0.2 + 1e-9)
        let totals = try store.sqlite.reading { sql throws(OffpeakError) in try CacheRules.totals(sql) }
        #expect(totals.entries == 3 && totals.rawBytes == 8700 && totals.storedBytes == 4350)
        // v25 made the cache table anew, its rows found by an id made from the key.
        for (index, size) in [100, 250, 4000].enumerated() {
            let found = try store.cache.findCacheEntry(key: "k\(index)", now: Date()) { payload, fresh in
                (payload.count, fresh)
            }
            #expect(found?.0 == size && found?.1 == true, "k\(index)")
        }
        #expect(try store.cache.findCacheEntry(key: "k3", now: Date()) { _, _ in true } == nil)
    }

    @Test func theCacheByteTotalFollowsEverySaveReplacementEvictionAndPurge() throws {
        let workspace = try TemporaryWorkspace()
        let store = try StoreTests.store(workspace)
        let cache = ResponseCache(store: store, maxBytes: 6_000, logger: Logger(label: "test"))
        func expectTotalsMatch(_ step: String) throws {
            let kept = try store.cacheTotals()
            let summed = try ["COUNT(*)", "SUM(raw_bytes)", "SUM(stored_bytes)"].map { sum in
                try store.value("SELECT CAST(COALESCE(\(sum), 0) AS BIGINT) FROM cache_entries", as: Int.self)
            }
            #expect([kept.entries, kept.rawBytes, kept.storedBytes] == summed, "after \(step)")
        }
        let t0 = ResponseCacheTests.t0
        for round in 0..<12 {
            let answers = (0..<3).map {
                (
                    key: ResponseCacheTests.key(round * 2 + $0),
                    answer: ResponseCacheTests.answer($0, words: 20 + round * 9)
                )
            }
            try cache.save(
                answers: answers, job: round % 2 == 0 ? "even" : "odd", provider: "sim", ttl: 60, now: t0)
            _ = try cache.answer(for: answers[0].key, now: t0 + 1)
            try expectTotalsMatch("save \(round)")
        }
        #expect(try store.cacheTotals().storedBytes <= 6_000)
        try cache.save(
            source: CachedSource(
                url: "https://example.com/a", contentType: "text/plain", text: "a page", fetchedAt: t0),
            job: nil, ttl: 1, now: t0)
        try cache.refresh(sourceURL: "https://example.com/a", ttl: 5, now: t0)
        try expectTotalsMatch("source")
        for scope in [PurgeScope.job("odd"), .expired, .all] {
            try cache.purge(scope, now: t0 + 30)
            try expectTotalsMatch("purge \(scope)")
        }
        #expect(try store.cacheTotals().entries == 0)
    }
}

extension EncodableRecord {
    /// Inserts the row into `table` as an older offpeak wrote it, into a store of its schema:
    /// without `columns` (added by later versions), and without a nil `id` (the row's own).
    func insertAsBefore(_ db: Database, table: String, without columns: [String]) throws {
        var values = try databaseDictionary
        for column in columns { values[column] = nil }
        if values["id"]?.isNull == true { values["id"] = nil }
        let names = values.keys.sorted()
        try db.execute(
            sql: "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES ("
                + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")",
            arguments: StatementArguments(names.map { values[$0] ?? .null }))
    }
}

extension LedgerEntry {
    /// Inserts the row as an offpeak before v14 wrote it: without the `host` column (nor v20's
    /// `search_requests`, v21's `audit`, v23's `flex` or v30's `calls`).
    func insertBeforeHosts(_ db: Database) throws {
        try insertAsBefore(
            db, table: "ledger",
            without: [
                "host", "search_requests", "audit", "flex", "calls", "price_window", "waiting_saved", "tags",
            ])
    }
}

extension RequestRecord {
    /// Inserts the row as a store from before v19 (no `sources` column) holds it.
    func insertBeforeSources(_ db: Database) throws {
        try insertAsBefore(db, table: "requests", without: ["sources", "tags"])
    }
}

extension ResultRecord {
    /// Inserts the row as a store from before v20 (no `citations` column) holds it.
    func insertBeforeCitations(_ db: Database) throws {
        try insertAsBefore(db, table: "results", without: ["citations"])
    }
}
