import Foundation
import Synchronization
import Testing

@testable import Offpeak

/// `LedgerStore`, the same scenarios on both engines (`StoreEngine`): spend by run, day, job, model
/// and lane, budget reservations and refusals, and what past calls measured. Ledger rows are written
/// as calls commit them (`RunStore.commitCall`). Dollars are sums of binary fractions, so both
/// engines' doubles are exact.
struct LedgerStoreRoleTests {
    typealias F = RoleFixtures

    static func calendar(_ zone: String) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone) ?? .gmt
        return calendar
    }

    /// One call's ledger row.
    static func call(
        run: String?, job: String = "j", model: String = "m", at: Date = F.t0, dollars: Double = 0.5,
        naive: Double = 1, items: Int = 1, input: Int = 100, output: Int = 20, cacheHit: Bool = false,
        failed: Bool = false, unpriced: Bool = false, batch: Bool = false, latencyMs: Int = 40
    ) -> LedgerEntry {
        var entry = LedgerEntry(
            id: nil, at: at, job: job, runId: run, provider: "sim", model: model, tier: "fast",
            downgraded: false, items: items, inputTokens: input, outputTokens: output, cacheReadTokens: 8,
            cacheWriteTokens: 2, dollars: dollars, naiveDollars: naive, batchApi: batch, cacheHit: cacheHit,
            usageEstimated: false, latencyMs: latencyMs)
        entry.failed = failed
        entry.unpriced = unpriced
        return entry
    }

    /// Commits each row as its own call to `run` (a row's own run may differ, or be none).
    static func book(_ roles: StoreRoles, _ entries: [LedgerEntry], run: String = "r1") throws {
        let record = try #require(try roles.runs.run(id: run))
        for entry in entries { try roles.runs.commitCall(run: record, ledger: entry, results: []) }
    }

    static func spend(
        calls: Int, input: Int, output: Int, read: Int, write: Int, dollars: Double, naive: Double,
        failed: Int = 0, unpriced: Int = 0
    ) -> Spend {
        var spend = Spend()
        spend.calls = calls
        spend.inputTokens = input
        spend.outputTokens = output
        spend.cacheReadTokens = read
        spend.cacheWriteTokens = write
        spend.dollars = dollars
        spend.naiveDollars = naive
        spend.failedCalls = failed
        spend.unpricedCalls = unpriced
        return spend
    }

    /// A provider batch not yet collected, holding its worst case.
    static func openBatch(_ roles: StoreRoles, id: String, run: String, dollars: Double, tokens: (Int, Int))
        throws
    {
        try roles.execute(
            """
            INSERT INTO provider_batches (id, run_id, provider, model, state, prepared_at, worst_dollars,
                worst_input_tokens, worst_output_tokens)
            VALUES ('\(id)', '\(run)', 'sim', 'm', 'submitted', '2027-01-15 08:00:00.000', \(dollars),
                \(tokens.0), \(tokens.1))
            """)
    }

    @Test(arguments: StoreEngine.allCases)
    func spendIsSummedByRunJobModelAndSince(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1", job: "j"), requests: [])
        try roles.runs.insert(run: F.run("r2", job: "k"), requests: [])
        try Self.book(
            roles,
            [
                Self.call(run: "r1"),
                Self.call(run: "r1", model: "m2", at: F.t0 + 60, dollars: 0.25, naive: 0.5, failed: true),
                Self.call(run: "r1", at: F.t0 + 120, dollars: 0, naive: 0.75, cacheHit: true),
                Self.call(run: "r2", job: "k", model: "m2", at: F.t0 + 86_400, dollars: 2, naive: 4),
                Self.call(
                    run: nil, job: "k", model: "u", at: F.t0 + 90_000, dollars: 0, naive: 0, unpriced: true),
                Self.call(
                    run: nil, job: "k", model: "w", at: F.t0 + 90_000, dollars: 0, cacheHit: true,
                    unpriced: true),
            ])
        let r1 = Self.spend(
            calls: 2, input: 300, output: 60, read: 24, write: 6, dollars: 0.75, naive: 2.25, failed: 1)
        #expect(try roles.ledger.spend(runID: "r1") == r1)
        #expect(try roles.ledger.recountSpend(runID: "r1") == r1)
        #expect(try roles.ledger.spend(runID: "r2").dollars == 2)
        #expect(try roles.ledger.spend(runID: "none") == Spend())
        #expect(try roles.ledger.recountSpend(runID: "none") == Spend())
        let since = try roles.ledger.spend(since: F.t0 + 86_400)
        #expect(
            since
                == Self.spend(
                    calls: 2, input: 300, output: 60, read: 24, write: 6, dollars: 2, naive: 5, unpriced: 1))
        #expect(try roles.ledger.spend(since: F.t0 + 200_000) == Spend())
        #expect(try roles.ledger.unpricedModels() == ["u"], "a cache hit is no unpriced call")

        let byJob = try roles.ledger.costs(groupedBy: .job)
        #expect(byJob.map(\.key) == ["k", "j"])
        #expect(byJob.map(\.spend.dollars) == [2, 0.75])
        #expect(byJob.map(\.spend.calls) == [2, 2])
        let byModel = try roles.ledger.costs(groupedBy: .model)
        #expect(byModel.map(\.key) == ["m2", "m", "u", "w"], "most expensive first, then by name")
        #expect(byModel.map(\.spend.dollars) == [2.25, 0.5, 0, 0])
        #expect(byModel.map(\.spend.naiveDollars) == [4.5, 1.75, 0, 1])
    }

    @Test(arguments: StoreEngine.allCases)
    func costsByDayFollowTheLocalCalendar(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1"), requests: [])
        // t0 is 2027-01-15 08:00 UTC, 03:00 in New York.
        try Self.book(
            roles,
            [
                Self.call(run: "r1", at: F.t0 - 4 * 3_600, dollars: 0.125),  // 23:00 on the 14th in New York
                Self.call(run: "r1", at: F.t0, dollars: 0.25),
                Self.call(run: "r1", at: F.t0 + 15 * 3_600, dollars: 0.5),  // 18:00 on the 15th
                Self.call(run: "r1", at: F.t0 + 20 * 86_400, dollars: 1, cacheHit: true),
            ])
        let newYork = try roles.ledger.costsByDay(calendar: Self.calendar("America/New_York"))
        #expect(newYork.map(\.key) == ["2027-02-04", "2027-01-15", "2027-01-14"])
        #expect(newYork.map(\.spend.dollars) == [1, 0.75, 0.125])
        #expect(newYork.map(\.spend.calls) == [0, 2, 1])
        let tokyo = try roles.ledger.costsByDay(calendar: Self.calendar("Asia/Tokyo"))
        // 13:00 and 17:00 on the 15th, 08:00 on the 16th, and the 4th of February in Tokyo.
        #expect(tokyo.map(\.key) == ["2027-02-04", "2027-01-16", "2027-01-15"])
        #expect(tokyo.map(\.spend.dollars) == [1, 0.5, 0.375])
        let empty = try engine.roles()
        #expect(try empty.ledger.costsByDay(calendar: Self.calendar("UTC")).isEmpty)
    }

    @Test(arguments: StoreEngine.allCases)
    func answerLengthsAndLatencyAreMeasuredFromPaidCalls(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1"), requests: [])
        try Self.book(
            roles,
            [
                Self.call(run: "r1", items: 2, output: 20, latencyMs: 400),
                Self.call(run: "r1", job: "k", items: 1, output: 100, latencyMs: 1_000),
                Self.call(run: "r1", items: 1, output: 30, latencyMs: 200),
                Self.call(run: "r1", items: 1, output: 500, cacheHit: true),
                Self.call(run: "r1", items: 1, output: 0, failed: true),
                Self.call(run: "r1", model: "other", items: 3, output: 0),
            ])
        let all = try #require(try roles.ledger.outputPerItem(model: "m", job: nil))
        #expect(all.tokens == 150.0 / 4 && all.items == 4)
        let job = try #require(try roles.ledger.outputPerItem(model: "m", job: "j"))
        #expect(job.tokens == 50.0 / 3 && job.items == 3)
        let newest = try #require(try roles.ledger.outputPerItem(model: "m", job: "j", calls: 1))
        #expect(newest.tokens == 30 && newest.items == 1)
        #expect(try roles.ledger.outputPerItem(model: "m", job: "j", calls: 0) == nil)
        #expect(try roles.ledger.outputPerItem(model: "m", job: "j", calls: -1)?.items == 3, "no limit")
        #expect(try roles.ledger.outputPerItem(model: "other", job: nil) == nil, "no answer had tokens")
        #expect(try roles.ledger.outputPerItem(model: "nobody", job: nil) == nil)

        // Paid calls only, each folded into the means with weight 0.3.
        let latency = try #require(try roles.ledger.latency(model: "m"))
        #expect(latency.samples == 3)
        let mean = [400.0, 1_000, 200].dropFirst().reduce(400.0) { $0 * 0.7 + $1 * 0.3 }
        #expect(abs(latency.msPerCall - mean) < 1e-9)
        let perToken = [(400.0, 20.0), (1_000, 100), (200, 30)].map { $0.0 / ($0.1 + 110.0 / 8) }
        let perTokenMean = perToken.dropFirst().reduce(perToken[0]) { $0 * 0.7 + $1 * 0.3 }
        #expect(abs(latency.msPerWeightedToken - perTokenMean) < 1e-9)
        #expect(abs(latency.outputTokens - ((20 * 0.7 + 100 * 0.3) * 0.7 + 30 * 0.3)) < 1e-9)
        #expect(try roles.ledger.latency(model: "nobody") == nil)

        // A flex call (issue 46, item 9) is measured apart: it may queue for capacity first, and
        // the live lane's windows and timeouts must not wait for that.
        var flex = Self.call(run: "r1", items: 1, output: 30, latencyMs: 90_000)
        flex.flex = true
        try Self.book(roles, [flex])
        #expect(try roles.ledger.latency(model: "m") == latency, "the live lane's measure is its own")
        let flexed = try #require(
            try roles.ledger.latency(model: LatencyEstimate.key(model: "m", lane: .flex)))
        #expect(flexed.samples == 1 && flexed.msPerCall == 90_000)
    }

    @Test(arguments: StoreEngine.allCases)
    func laneSplitAndWorkspaceTotalsReadTheWholeStore(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1"), requests: F.requests(4, run: "r1"))
        try roles.runs.insert(
            run: F.run("r2", job: "k", state: .canceled), requests: F.requests(3, run: "r2"))
        try roles.runs.insert(run: F.run("r3", job: "k", state: .completed), requests: [])
        let requests = try roles.runs.requests(runID: "r1")
        let run = try #require(try roles.runs.run(id: "r1"))
        try roles.runs.commitCall(
            run: run, ledger: Self.call(run: "r1", items: 2),
            results: [F.result(requests[0]), F.result(requests[1])],
            failed: [(requests[2].id, "refused")])
        try Self.book(roles, [Self.call(run: "r1", model: "m2", dollars: 0.25, batch: true)])
        #expect(try roles.ledger.spendByLane() == nil, "no provider batch was ever made")
        _ = try roles.schedules.deferJob(
            "k", run: nil, reasons: "on battery; metered", host: "test-host", at: F.t0)
        var counted = PendingAccesses()
        _ = counted.record(key: nil, kind: .answer, hit: true, at: F.t0)
        _ = counted.record(key: nil, kind: .answer, hit: false, at: F.t0)
        _ = counted.record(key: nil, kind: .source, hit: false, at: F.t0 + 86_400)
        try roles.cache.writeCacheAccesses(counted.take())
        try Self.openBatch(roles, id: "b1", run: "r1", dollars: 0.5, tokens: (1_000, 200))

        let lanes = try #require(try roles.ledger.spendByLane())
        #expect(lanes.map(\.lane) == [.live, .batch])
        #expect(lanes.map(\.model) == ["m", "m2"])
        #expect(lanes.map(\.items) == [2, 1])
        #expect(lanes.map(\.spend.dollars) == [0.5, 0.25])
        let totals = try roles.ledger.workspaceTotals()
        #expect(totals.spend.calls == 2 && totals.spend.dollars == 0.75)
        #expect(totals.lanes == lanes)
        #expect(totals.itemsTotal == 7 && totals.itemsDone == 2 && totals.itemsFailed == 1)
        #expect(totals.itemsCanceled == 3)
        #expect(totals.runs == [.idle: 1, .canceled: 1, .completed: 1])
        #expect(totals.deferredReasons == [["on battery", "metered"]])
        #expect(totals.cacheHits == ["answer": 1, "source": 0])
        #expect(totals.cacheMisses == ["answer": 1, "source": 1])
        #expect(totals.batchesInFlight == 1)
    }
}
