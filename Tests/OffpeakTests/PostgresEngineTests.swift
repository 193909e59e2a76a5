import Foundation
import GRDB
import OffpeakTestSupport
import PostgresNIO
import Synchronization
import Testing

@testable import Offpeak

/// What only the PostgreSQL engine can show: commits from two connections at once, the rows its
/// counters and payloads leave, and a backlog inserted in a few statements.
@Suite(.ownThreads) struct PostgresEngineTests {
    typealias F = RoleFixtures

    static func engine(_ url: String? = nil) throws -> PostgresEngine {
        let store = try PostgresStoreTests.connect(url)
        try PostgresMigrations.migrate(store)
        return PostgresEngine(store)
    }

    @Test func twoConnectionsCommittingToOneRunNeverLoseACount() throws {
        let url = try PostgresCluster.shared.makeDatabase()
        let engines = try (0..<2).map { _ in try Self.engine(url) }
        defer { for engine in engines { engine.store.close() } }
        let run = F.run("r1")
        let perThread = 40
        let requests = F.requests(2 * perThread, run: "r1")
        try engines[0].insert(run: run, requests: requests)
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for (index, engine) in engines.enumerated() {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for step in 0..<perThread {
                    let request = requests[index * perThread + step]
                    do {
                        try engine.commitCall(
                            run: run, ledger: F.ledger(run: "r1", items: 1), results: [F.result(request)])
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        group.wait()
        #expect(failures.withLock { $0 }.isEmpty)
        let counts = try engines[1].itemCounts(runID: "r1")
        #expect(counts == ItemCounts(requests: 2 * perThread, total: 2 * perThread, done: 2 * perThread))
        // Commits take turns on the run's row: the last one wrote every count.
        #expect(try engines[1].run(id: "r1")?.itemsDone == 2 * perThread)
        let spend = try engines[1].commitCall(run: run, ledger: nil, results: []).spend
        #expect(spend.calls == 2 * perThread && spend.dollars == 0.5 * Double(2 * perThread))
    }

    /// Runs `body` on one thread per engine, all started at once; returns what each gave.
    static func atOnce<Value: Sendable>(
        _ engines: [PostgresEngine], _ body: @escaping @Sendable (Int, PostgresEngine) throws -> Value
    ) -> [Result<Value, any Error>] {
        let results = Mutex<[Int: Result<Value, any Error>]>([:])
        let group = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for (index, engine) in engines.enumerated() {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                start.wait()
                let result = Result { try body(index, engine) }
                results.withLock { $0[index] = result }
            }
        }
        for _ in engines { start.signal() }
        group.wait()
        return results.withLock { results in engines.indices.compactMap { results[$0] } }
    }

    @Test func connectionsOpeningOneJobAtOnceGetOneRun() throws {
        let url = try PostgresCluster.shared.makeDatabase()
        let engines = try (0..<4).map { _ in try Self.engine(url) }
        defer { for engine in engines { engine.store.close() } }
        let opened = try Self.atOnce(engines) { index, engine in
            let id = "r\(index)"
            return try engine.openRun(
                job: "j", creating: F.run(id), requests: F.requests(50, run: id),
                lease: LeaseRecord(
                    runId: id, owner: "box-\(index):1", acquiredAt: F.t0, heartbeatAt: F.t0,
                    expiresAt: F.t0 + 600, host: "box-\(index)"))
        }.map { try $0.get() }
        #expect(opened.filter(\.created).count == 1)
        #expect(Set(opened.map(\.run.id)).count == 1)
        #expect(try engines[0].runs(limit: 10).count == 1)
        let submitted = try Self.atOnce(engines) { index, engine in
            try engine.enqueue(
                [F.request("s\(index)", run: "x", position: 0), F.request("shared", run: "x", position: 0)],
                job: "q", newRun: F.run("q\(index)", job: "q"))
        }.map { try $0.get() }
        #expect(submitted.map { $0[0] } == [nil, nil, nil, nil])
        #expect(submitted.filter { $0[1] == nil }.count == 1)
        let queue = try #require(try engines[0].latestResumableRun(job: "q"))
        #expect(try engines[0].requests(runID: queue.id, states: nil).map(\.position) == Array(0..<5))
    }

    @Test func connectionsTakingOneLeaseAtOnceLeaveOneHolder() throws {
        let url = try PostgresCluster.shared.makeDatabase()
        let engines = try (0..<4).map { _ in try Self.engine(url) }
        defer { for engine in engines { engine.store.close() } }
        try engines[0].insert(run: F.run("r1"), requests: [])
        let now = Date()
        let answers = try Self.atOnce(engines) { index, engine in
            try engine.acquireLease(
                runID: "r1", owner: "other-host:\(index)", host: "test-host", ttl: 60, now: now)
        }.map { try $0.get() }
        let winners = answers.indices.filter { answers[$0] == nil }
        #expect(winners.count == 1)
        let holder = "other-host:\(winners.first ?? -1)"
        #expect(answers.allSatisfy { $0 == nil || $0 == holder })
    }

    @Test func theCountersEqualARecountAfterEveryKindOfWrite() throws {
        let engine = try Self.engine()
        defer { engine.store.close() }
        var requests = F.requests(6, run: "r1")
        requests[5].source = .chunk
        try engine.insert(run: F.run("r1"), requests: requests)
        try engine.commitCacheHits(
            run: F.run("r1"),
            [(F.ledger(run: "r1", items: 1, cacheHit: true), F.result(requests[0], fromCache: true))],
            lease: RunHold(owner: "h:1", ttl: 60))
        try engine.commitCall(
            run: F.run("r1"), ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[1])],
            failed: [("r1/i2", "no")])
        try engine.merge(requests: Array(requests[1...4]), into: "r1")
        #expect(try engine.itemCounts(runID: "r1") == (try Self.recount(engine, runID: "r1")))
        try engine.store.query("DELETE FROM requests WHERE id = 'r1/i1'")
        try engine.store.query("UPDATE results SET from_cache = true")
        #expect(try engine.itemCounts(runID: "r1") == (try Self.recount(engine, runID: "r1")))
        try engine.store.query("DELETE FROM runs WHERE id = 'r1'")
        #expect(try engine.itemCounts(runID: "r1") == ItemCounts())
    }

    /// `SQLiteStore.recountItems`, on PostgreSQL.
    static func recount(_ engine: PostgresEngine, runID: String) throws -> ItemCounts {
        let row = try #require(
            try engine.store.query(
                """
                SELECT count(*), count(*) FILTER (WHERE q.source NOT IN ('chunk', 'reduce')),
                    count(*) FILTER (WHERE q.source NOT IN ('chunk', 'reduce') AND q.state = 'done'),
                    count(*) FILTER (WHERE q.source NOT IN ('chunk', 'reduce') AND q.state = 'failed'),
                    count(*) FILTER (WHERE q.source NOT IN ('chunk', 'reduce') AND r.from_cache)
                FROM requests q LEFT JOIN results r ON r.request_id = q.id WHERE q.run_id = \(runID)
                """
            ).first)
        let (requests, total, done, failed, cached) = try engine.store.decode(
            row, as: (Int, Int, Int, Int, Int).self)
        return ItemCounts(requests: requests, total: total, done: done, failed: failed, cached: cached)
    }

    @Test func payloadRowsHoldTheSameBytesAsSQLites() throws {
        let engine = try Self.engine()
        defer { engine.store.close() }
        let sqlite = try StoreEngine.sqlite.roles()
        let requests = (0..<3).map { index in
            var request = F.request("s\(index)", run: "x", position: 0)
            request.payload = F.sharedPayload("question \(index)")
            return request
        }
        _ = try engine.enqueue(requests, job: "j", newRun: F.run("q1"))
        _ = try sqlite.submissions.enqueue(requests, job: "j", newRun: F.run("q1"))
        let rows = try engine.store.query("SELECT payload FROM requests ORDER BY position").map {
            row throws(OffpeakError) in try engine.store.decode(row, as: String.self)
        }
        let store = try #require(sqlite.runs as? SQLiteStore)
        let expected = try store.read { db in
            try String.fetchAll(db, sql: "SELECT payload FROM requests ORDER BY position")
        }
        #expect(rows == expected)
        #expect(rows.allSatisfy { $0.utf8.contains(StoredPayload.marker) })
        #expect(try engine.store.query("SELECT 1 FROM shared_texts").count == 1)
    }

    @Test func aBigBacklogIsInsertedAndRead() throws {
        let engine = try Self.engine()
        defer { engine.store.close() }
        let requests = F.requests(5_000, run: "r1")
        try engine.insert(run: F.run("r1"), requests: requests)
        #expect(try engine.itemCounts(runID: "r1").total == 5_000)
        #expect(
            try engine.pendingRequests(runID: "r1", after: 4_997, limit: 5).map(\.position) == [4_998, 4_999])
    }

    @Test func aCommitReleasesItsReservationAndMeasuresThePaidCall() throws {
        let engine = try Self.engine()
        defer { engine.store.close() }
        let requests = F.requests(3, run: "r1")
        try engine.insert(run: F.run("r1"), requests: requests)
        let reserved = try #require(
            try engine.store.query(
                """
                INSERT INTO budget_reservations (run_id, job, owner, dollars, tokens, reserved_at)
                VALUES ('r1', 'j', 'h:1', 1.5, 100, now()) RETURNING id
                """
            ).first)
        let id = try engine.store.decode(reserved, as: Int64.self)
        try engine.commitCall(
            run: F.run("r1"), ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[0])],
            releasing: id)
        #expect(try engine.store.query("SELECT 1 FROM budget_reservations").isEmpty)
        var failed = F.ledger(run: "r1", items: 1)
        failed.failed = true
        try engine.commitCall(run: F.run("r1"), ledger: failed, results: [], retry: [("r1/i1", "timeout")])
        let samples = try engine.store.query("SELECT samples FROM model_latency WHERE model = 'm'").map {
            row throws(OffpeakError) in try engine.store.decode(row, as: Int.self)
        }
        #expect(samples == [1])
    }

    @Test func aRunRowThatDoesNotDecodeIsNamedApart() throws {
        let engine = try Self.engine()
        defer { engine.store.close() }
        try engine.insert(run: F.run("r1"), requests: [])
        try engine.insert(run: F.run("r2", at: F.t0 + 1), requests: [])
        try engine.store.query("UPDATE runs SET state = 'bogus' WHERE id = 'r1'")
        let rows = try engine.runRows(limit: 10)
        #expect(rows.runs.map(\.id) == ["r2"])
        #expect(rows.unreadable.map(\.id) == ["r1"])
        #expect(try engine.readableRun(id: "r1") == nil)
        #expect(throws: OffpeakError.self) { try engine.run(id: "r1") }
        // Not open, so not resumable: the job's open run is found beside it.
        #expect(try engine.latestResumableRun(job: "j")?.id == "r2")
    }
}
