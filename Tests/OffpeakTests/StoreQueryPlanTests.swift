import Foundation
import GRDB
import Logging
import OffpeakTestSupport
import Synchronization
import Testing

@testable import Offpeak

/// Every query the reports (`status`, `queue`, `cache stats`, `costs` by job, model and day), an
/// idle tick and a call's commit run reads an index, not a big table (issue 11, item 6): each
/// statement they make is traced and planned with EXPLAIN QUERY PLAN.
@Suite(.ownThreads) struct StoreQueryPlanTests {
    /// The tables that grow with use: a plan may not scan them, except the ledger through an index
    /// that covers what it sums.
    static let big = ["requests", "results", "ledger", "cache_entries", "runs"]

    /// Runs `body` on a store holding a little of everything; returns each SELECT, UPDATE and
    /// DELETE it made, once.
    static func traced(_ body: (Store, ResponseCache) throws -> Void) throws -> (Store, [String]) {
        let workspace = try TemporaryWorkspace()
        let statements = Mutex<[String]>([])
        let url = Workspace(root: workspace.root).databaseURL
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let store = try Store(url: url) { db in
            db.trace(options: .statement) { event in
                if case .statement(let statement) = event { statements.withLock { $0.append(statement.sql) } }
            }
        }
        let cache = ResponseCache(store: store, maxBytes: 1 << 20, logger: Logger(label: "test"))
        try fill(store, cache)
        statements.withLock { $0.removeAll() }
        try body(store, cache)
        var seen: Set<String> = []
        let planned = statements.withLock { $0 }.filter {
            ["SELECT", "UPDATE", "DELETE"].contains($0.prefix(6).uppercased()) && seen.insert($0).inserted
        }
        return (store, planned)
    }

    static func fill(_ store: Store, _ cache: ResponseCache) throws {
        var requests = (0..<20).map { StoreTests.request("i\($0)", run: "r1", position: $0) }
        requests[3].state = .retrying
        requests[3].nextAttemptAt = Date() + 60
        try store.runs.insert(run: StoreTests.run("r1", state: .running), requests: requests)
        let run = try #require(try store.runs.run(id: "r1"))
        try store.runs.commitCall(
            // Three items: an unpriced call (see `StoreCountersTests.ledger`), so `costs` lists its model.
            run: run,
            ledger: StoreCountersTests.ledger(run: "r1", items: 3, hit: false, failed: false, dollars: 0.01),
            results: [StoreCountersTests.result(requests[0], cached: false)])
        try store.runs.commitCacheHits(
            run: run,
            [
                (
                    StoreCountersTests.ledger(run: "r1", items: 1, hit: true, failed: false, dollars: 0),
                    StoreCountersTests.result(requests[1], cached: true)
                )
            ], lease: RunHold(owner: "test", ttl: 60))
        // A call billed in a price window, of a run that waited for it, with tags: the splits' reports.
        var windowed = StoreCountersTests.ledger(
            run: "r1", items: 1, hit: false, failed: false, dollars: 0.01)
        (windowed.priceWindow, windowed.waitingSaved, windowed.tags) = ("off-peak", 0.01, "project:atlas")
        try store.runs.commitCall(
            run: run, ledger: windowed, results: [StoreCountersTests.result(requests[2], cached: false)])
        try cache.save(
            answers: [(key: "k", answer: ResponseCacheTests.answer(1))], job: "j", provider: "sim", ttl: 60)
        try store.schedules.deferJob("held", run: nil, reasons: "on battery", host: "test-host", at: Date())
    }

    /// The plan of `sql`, one line per step.
    static func plan(_ store: Store, _ sql: String) throws -> [String] {
        try store.sqlite.read { db in
            // Planned with every parameter NULL: a plan does not depend on the values (no partial
            // index here is chosen by a bound value).
            let statement = try db.makeStatement(sql: "EXPLAIN QUERY PLAN " + sql)
            statement.setUncheckedArguments([])
            return try Row.fetchAll(statement).map { $0["detail"] as String? ?? "" }
        }
    }

    /// Each statement's plan scans no big table (but the ledger through a covering index); returns
    /// the plans, to look for the index each hot query should use.
    static func expectIndexed(_ store: Store, _ statements: [String]) throws -> String {
        var plans: [String] = []
        for sql in statements {
            let steps = try plan(store, sql)
            for step in steps {
                for table in big where step.hasPrefix("SCAN \(table)") {
                    let covered =
                        table == "ledger" && step.contains("USING COVERING INDEX ledger_spend_by_")
                        || step.hasPrefix("SCAN ledger USING COVERING INDEX ledger_cache_hits")
                        || step.hasPrefix("SCAN ledger USING COVERING INDEX ledger_unpriced_models")
                        || step.hasPrefix("SCAN ledger USING COVERING INDEX ledger_searches")
                        // The partial index holds audit calls alone (a few % of calls at most).
                        || step.hasPrefix("SCAN ledger USING INDEX ledger_audits")
                        // The partial index holds flex calls alone: whether there is one is its
                        // first row.
                        || step.hasPrefix("SCAN ledger USING INDEX ledger_flex")
                        // The partial index holds calls lost in flight alone (a few a kill).
                        || step.hasPrefix("SCAN ledger USING INDEX ledger_lost")
                        // The partial index holds the calls of runs that waited for cheaper prices.
                        || step.hasPrefix("SCAN ledger USING COVERING INDEX ledger_waited")
                        || step.hasPrefix("SCAN runs USING INDEX runs_by_created")
                        || step.hasPrefix("SCAN requests USING INDEX requests_retrying")
                    #expect(covered, "\(sql)\n  scans: \(step)")
                }
            }
            plans.append(sql + "\n  " + steps.joined(separator: "\n  "))
        }
        return plans.joined(separator: "\n")
    }

    @Test func theReportsReadIndexesOnly() throws {
        let (store, statements) = try Self.traced { store, cache in
            _ = try StatusReport.make(store: store)
            _ = try QueueReport.make(store: store, conditions: nil)
            _ = try cache.stats()
            for grouping in CostReport.Grouping.allCases {
                _ = try CostReport.make(store: store, by: grouping)
            }
        }
        let plans = try Self.expectIndexed(store, statements)
        for index in [
            "runs_by_created", "requests_retrying", "ledger_spend_by_time", "ledger_spend_by_job",
            "ledger_spend_by_model", "ledger_cache_hits", "cache_entries_by_created",
            "cache_entries_on_expires_at",
            "run_spend", "ledger_unpriced_models", "ledger_windowed_by_job", "ledger_windowed_by_model",
            "ledger_windowed_by_time", "ledger_tagged", "ledger_waited",
        ] {
            #expect(plans.contains(index), "no plan uses \(index):\n\(plans)")
        }
        #expect(!plans.contains("TEMP B-TREE FOR GROUP BY"), "\(plans)")
    }

    /// A cache lookup descends the table's B-tree once, by the row id made from the key, not the
    /// key's index and then the table; saving an entry finds its row the same way.
    @Test func aCacheLookupFindsItsRowByID() throws {
        let (store, _) = try Self.traced { _, _ in }
        #expect(
            try Self.plan(store, CacheLookups.lookupSQL) == [
                "SEARCH cache_entries USING INTEGER PRIMARY KEY (rowid=?)"
            ])
    }

    /// A feed run's read of the job's answered items goes through their index, not every request.
    @Test func aJobsAnsweredItemsAreReadThroughTheirIndex() throws {
        let (store, statements) = try Self.traced { store, _ in _ = try store.runs.answeredItems(job: "j") }
        let plans = try Self.expectIndexed(store, statements)
        #expect(plans.contains("requests_answered_by_job"), "\(plans)")
    }

    /// The metrics a tick writes (issue 14, item 4), on a workspace that never used the batch lane.
    @Test func theMetricsReadIndexesOnly() throws {
        let (store, statements) = try Self.traced { store, _ in _ = try store.ledger.workspaceTotals() }
        let plans = try Self.expectIndexed(store, statements)
        for index in ["ledger_spend_by_", "runs_by_state"] {
            #expect(plans.contains(index), "no plan uses \(index):\n\(plans)")
        }
    }

    @Test func aCallsCommitAndAnIdleTicksReadsUseIndexesOnly() throws {
        let (store, statements) = try Self.traced { store, cache in
            let run = try #require(try store.runs.run(id: "r1"))
            _ = try store.ledger.spend(runID: "r1")
            _ = try store.runs.pendingRequests(runID: "r1", after: 4, limit: 8)
            _ = try store.runs.dueRetries(runID: "r1", by: Date())
            // A helper's round (`LeaseStore+SQL`): pending and due retries of the run, by position.
            _ = try store.leases.claimRound(
                runID: "r1", owner: "helper", host: "h", limit: 8, ttl: 60, now: Date())
            try store.leases.releaseClaim(runID: "r1", owner: "helper")
            let pending = try store.runs.pendingRequests(runID: "r1", limit: 2)
            try store.runs.commitCall(
                run: run,
                ledger: StoreCountersTests.ledger(
                    run: "r1", items: 2, hit: false, failed: false, dollars: 0.02),
                results: pending.map { StoreCountersTests.result($0, cached: false) })
            try cache.save(
                answers: [(key: "k2", answer: ResponseCacheTests.answer(2))], job: "j", provider: "sim",
                ttl: 60)
            var submitted = StoreTests.request("q1", run: "", position: 0)
            submitted.source = .submit
            _ = try store.submissions.enqueue([submitted], job: "q", newRun: StoreTests.run("r2", job: "q"))
            try store.runs.merge(requests: [StoreTests.request("i0", run: "r1", position: 0)], into: "r1")
            _ = try store.runs.resumableRunRows()
            _ = try ScheduleBook(store: store).due([], now: Date())
            _ = try cache.purge(.expired)
        }
        let plans = try Self.expectIndexed(store, statements)
        for index in [
            "run_items", "requests_by_run_position", "requests_by_run_source", "requests_by_run_state",
        ] {
            #expect(plans.contains(index), "no plan uses \(index):\n\(plans)")
        }
        #expect(!plans.contains("SUM(stored_bytes)"), "a save sums the cache:\n\(plans)")
    }
}
