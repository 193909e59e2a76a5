import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// What a user sees of the batch lane (issue 12, items 6 and 7): `status` shows the batches out per
/// run and the items in them, `offpeak batches` lists them, `costs` splits live and batch spend and
/// says what the batch lane saved. Printed through the built binary, compared exactly; the store
/// is written directly, as the batch lane leaves it.
@Suite(.ownThreads) struct BatchReportTests {
    /// 2026-01-01 00:00 UTC; the binary runs with TZ=UTC, so times print as they are written here.
    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)
    static let utc: [String: String?] = ["TZ": "UTC"]

    /// Two models: `alpha` with batch prices, `beta` without (a batch of it costs half the live price).
    static let prices = """
        {"alpha": {"input_cost_per_token": 0.000001, "output_cost_per_token": 0.000004,
                   "input_cost_per_token_batches": 0.0000005, "output_cost_per_token_batches": 0.000002},
         "beta": {"input_cost_per_token": 0.000002, "output_cost_per_token": 0.000008}}
        """

    static func ledger(
        run: String, model: String, items: Int, input: Int, output: Int, dollars: Double, naive: Double
    )
        -> LedgerEntry
    {
        LedgerEntry(
            id: nil, at: Date(), job: "j", runId: run, provider: "anthropic", model: model, tier: "fast",
            downgraded: false, items: items, inputTokens: input, outputTokens: output, cacheReadTokens: 0,
            cacheWriteTokens: 0, dollars: dollars, naiveDollars: naive, batchApi: false, cacheHit: false,
            usageEstimated: false, latencyMs: 5)
    }

    /// Run `r1` (7 items): batch A out and polled (3 items in 2 requests, one errored), batch B
    /// preparing (1 item), batch C collected (1 item of alpha), batch D collected (a batched prompt
    /// of 2 items of beta), and one live call of alpha. Run `r2` (job `k`, 1 item): batch E of
    /// OpenAI submitted and not polled yet. Host `box-a` sent A and C, `laptop` D and E; B names no
    /// host, as a batch sent before hosts were recorded.
    static func workspace() throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "prices: prices.json\n")
        try workspace.write("prices.json", prices)
        let store = try StoreTests.store(workspace)
        var run = StoreTests.run("r1", state: .waiting)
        run.itemsTotal = 7
        run.reason = "4 items in a provider batch"
        let requests = (0..<7).map { StoreTests.request("i\($0)", run: "r1", position: $0) }
        try store.runs.insert(run: run, requests: requests)
        let ids = requests.map(\.id)
        let a = try store.batches.prepareBatch(
            runID: "r1", provider: "anthropic", model: "alpha", calls: [[ids[0], ids[1]], [ids[2]]],
            worstDollars: 0.25, host: "box-a", now: t0)
        try store.batches.recordSubmitted(
            batchID: a.id, remoteID: "msgbatch_A", now: t0 + 60, nextPoll: t0 + 120)
        try store.batches.recordPoll(
            batchID: a.id, status: "in_progress", counts: RemoteBatch.Counts(processing: 1, errored: 1),
            expiresAt: t0 + 86_400, next: t0 + 600)
        _ = try store.batches.prepareBatch(
            runID: "r1", provider: "anthropic", model: "alpha", requestIDs: [ids[3]], worstDollars: 0.05,
            now: t0 + 300)
        let c = try store.batches.prepareBatch(
            runID: "r1", provider: "anthropic", model: "alpha", requestIDs: [ids[4]], worstDollars: 0.01,
            host: "box-a", now: t0 - 7200)
        try store.batches.recordSubmitted(batchID: c.id, remoteID: "msgbatch_C", now: t0 - 7140, nextPoll: t0)
        try store.batches.recordPoll(
            batchID: c.id, status: "ended", counts: RemoteBatch.Counts(succeeded: 1), expiresAt: t0 + 79_200,
            next: t0)
        try store.batches.commitBatchCall(
            batchID: c.id, customID: "\(c.id)_0",
            .answered(
                ledger: ledger(
                    run: "r1", model: "alpha", items: 1, input: 1000, output: 100, dollars: 0.0007,
                    naive: 0.0014),
                results: [StoreCountersTests.result(requests[4], cached: false)]), run: nil, now: t0 - 3600)
        #expect(try store.batches.markCollected(batchID: c.id, now: t0 - 3600))
        let d = try store.batches.prepareBatch(
            runID: "r1", provider: "anthropic", model: "beta", calls: [[ids[5], ids[6]]], worstDollars: 0.02,
            host: "laptop", now: t0 - 3600)
        try store.batches.recordSubmitted(batchID: d.id, remoteID: "msgbatch_D", now: t0 - 3540, nextPoll: t0)
        try store.batches.recordPoll(
            batchID: d.id, status: "ended", counts: RemoteBatch.Counts(succeeded: 1), expiresAt: t0 + 82_800,
            next: t0)
        var booking = BatchBooking(outcome: .succeeded)
        booking.ledger = ledger(
            run: "r1", model: "beta", items: 2, input: 500, output: 50, dollars: 0.0007, naive: 0.0014)
        booking.results = [
            StoreCountersTests.result(requests[5], cached: false),
            StoreCountersTests.result(requests[6], cached: false),
        ]
        try store.batches.commitBatchCall(
            batchID: d.id, customID: "\(d.id)_0", booking, run: nil, now: t0 - 1800)
        #expect(try store.batches.markCollected(batchID: d.id, now: t0 - 1800))
        try store.insertLedger([
            ledger(
                run: "r1", model: "alpha", items: 1, input: 1000, output: 100, dollars: 0.0014, naive: 0.0014)
        ])
        // What the lane's collect leaves on the run row (booked here without the run).
        try store.execute("UPDATE runs SET items_done = 3 WHERE id = 'r1'")
        var other = StoreTests.run("r2", job: "k", state: .waiting)
        other.itemsTotal = 1
        other.createdAt = run.createdAt + 1
        let lone = StoreTests.request("j0", run: "r2", position: 0)
        try store.runs.insert(run: other, requests: [lone])
        let e = try store.batches.prepareBatch(
            runID: "r2", provider: "openai", model: "alpha", requestIDs: [lone.id], worstDollars: 1.5,
            host: "laptop", now: t0 + 400)
        try store.batches.recordSubmitted(
            batchID: e.id, remoteID: "batch_E", now: t0 + 420, nextPoll: t0 + 3600)
        return workspace
    }

    /// Our batch ids, by the provider id (or, for the one preparing, `B`).
    static func ids(_ workspace: TemporaryWorkspace) throws -> [String: String] {
        let store = try StoreTests.store(workspace)
        let batches = try store.batches.batches(runID: "r1") + store.batches.batches(runID: "r2")
        return Dictionary(
            uniqueKeysWithValues: batches.map {
                (($0.remoteId ?? "B").split(separator: "_").last.map(String.init) ?? "", $0.id)
            })
    }

    @Test func statusShowsEachBatchOutPerRunAndTheItemsInBatches() throws {
        let workspace = try Self.workspace()
        let id = try Self.ids(workspace)
        let a = try #require(id["A"]), b = try #require(id["B"]), e = try #require(id["E"])
        let status = try workspace.offpeak(["status"], environment: Self.utc)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(
            status.stdout == """
                spend today: $0.002800 in 3 calls (naive $0.004200)
                RUN  STATE    ITEMS             CALLS  COST       WHY
                r2   waiting  0/1 (1 in batch)  0      $0.00
                r1   waiting  3/7 (4 in batch)  3      $0.002800  4 items in a provider batch

                provider batches out:
                RUN  BATCH           PROVIDER ID      PROVIDER STATE  PROGRESS                SUBMITTED         EXPIRES
                r1   \(a)  msgbatch_A       in_progress     1 of 2 done, 1 errored  2026-01-01 00:01  2026-01-02 00:00
                r1   \(b)  not created yet  -               1 to send               -                 -
                r2   \(e)  batch_E          not polled yet  1 sent                  2026-01-01 00:07  -

                """)
        let json = try #require(
            try JSONSerialization.jsonObject(
                with: Data(try workspace.offpeak(["status", "--json"]).stdout.utf8)) as? [String: Any])
        let runs = try #require(json["runs"] as? [[String: Any]])
        #expect(runs.map { $0["items_in_batch"] as? Int } == [1, 4])
        let batches = try #require(json["batches"] as? [[String: Any]])
        #expect(batches.map { $0["id"] as? String } == [e, b, a], "newest first")
        let first = try #require(batches.last)
        #expect(
            Set(first.keys) == [
                "id", "job", "run", "host", "provider", "model", "remote_id", "state", "remote_status",
                "requests", "items",
                "counts", "worst_dollars", "prepared_at", "submitted_at", "expires_at", "polls",
            ])
        #expect(
            first["remote_id"] as? String == "msgbatch_A"
                && first["remote_status"] as? String == "in_progress")
        #expect(first["requests"] as? Int == 2 && first["items"] as? Int == 3 && first["polls"] as? Int == 1)
        #expect(
            first["counts"] as? [String: Int]
                == ["processing": 1, "succeeded": 0, "errored": 1, "canceled": 0, "expired": 0])
        #expect(first["expires_at"] as? String == "2026-01-02T00:00:00Z")
        #expect(first["host"] as? String == "box-a")
    }

    @Test func batchesListsTheOpenOnesOrWithAllEveryOneNewestFirst() throws {
        let workspace = try Self.workspace()
        let id = try Self.ids(workspace)
        let a = try #require(id["A"]), b = try #require(id["B"]), c = try #require(id["C"])
        let d = try #require(id["D"]), e = try #require(id["E"])
        let open = try workspace.offpeak(["batches"], environment: Self.utc)
        #expect(open.status == 0, "\(open.stderr)")
        let header =
            "BATCH           JOB  RUN  HOST    PROVIDER   PROVIDER ID      STATE      PROVIDER STATE  ITEMS  "
            + "REQUESTS  PROGRESS                WORST    PREPARED          SUBMITTED         EXPIRES\n"
        let rowE =
            "\(e)  k    r2   laptop  openai     batch_E          submitted  not polled yet  1      "
            + "1         1 sent                  $1.50    2026-01-01 00:06  2026-01-01 00:07  -\n"
        let rowB =
            "\(b)  j    r1   -       anthropic  not created yet  preparing  -               1      "
            + "1         1 to send               $0.0500  2026-01-01 00:05  -                 -\n"
        let rowA =
            "\(a)  j    r1   box-a   anthropic  msgbatch_A       submitted  in_progress     3      "
            + "2         1 of 2 done, 1 errored  $0.2500  2026-01-01 00:00  2026-01-01 00:01  2026-01-02 00:00\n"
        #expect(open.stdout == header + rowE + rowB + rowA)
        let all = try workspace.offpeak(["batches", "--all"], environment: Self.utc)
        let rowD =
            "\(d)  j    r1   laptop  anthropic  msgbatch_D       collected  ended           2      "
            + "1         1 of 1 done             $0.0200  2025-12-31 23:00  2025-12-31 23:01  2026-01-01 23:00\n"
        let rowC =
            "\(c)  j    r1   box-a   anthropic  msgbatch_C       collected  ended           1      "
            + "1         1 of 1 done             $0.0100  2025-12-31 22:00  2025-12-31 22:01  2026-01-01 22:00\n"
        #expect(all.stdout == header + rowE + rowB + rowA + rowD + rowC)
        let limited = try workspace.offpeak(["batches", "--all", "--limit", "4"], environment: Self.utc)
        #expect(limited.stdout == header + rowE + rowB + rowA + rowD + "1 older batch not shown (--limit)\n")
        let json = try #require(
            try JSONSerialization.jsonObject(
                with: Data(try workspace.offpeak(["batches", "--json"]).stdout.utf8))
                as? [[String: Any]])
        #expect(json.map { $0["id"] as? String } == [e, b, a])
        #expect(json.map { $0["job"] as? String } == ["k", "j", "j"])
        #expect(json.map { $0["host"] as? String } == ["laptop", nil, "box-a"], "B names no host")
        #expect(json[1].keys.contains("host") == false)
        #expect(json[1]["remote_id"] == nil && json[1]["state"] as? String == "preparing")
    }

    @Test func batchesSaysInOneLineThatThereAreNone() throws {
        let workspace = try TemporaryWorkspace()
        _ = try StoreTests.store(workspace)
        let open = try workspace.offpeak(["batches"])
        #expect(open.status == 0 && open.stdout == "no provider batches out\n")
        #expect(try workspace.offpeak(["batches", "--all"]).stdout == "no provider batches yet\n")
        #expect(try workspace.offpeak(["batches", "--json"]).stdout == "[\n\n]\n")
        let zero = try workspace.offpeak(["batches", "--all", "--limit", "0"])
        #expect(zero.status == 64)
    }

    @Test func costsSplitLiveAndBatchSpendAndSayWhatTheBatchLaneSaved() throws {
        let workspace = try Self.workspace()
        let costs = try workspace.offpeak(["costs", "--by", "model"])
        #expect(costs.status == 0, "\(costs.stderr)")
        #expect(
            costs.stdout == """
                MODEL  CALLS  INPUT  CACHE-READ  OUTPUT  COST       NAIVE      SAVED
                alpha  2      2000   0           200     $0.002100  $0.002800  $0.000700
                beta   1      500    0           50      $0.000700  $0.001400  $0.000700
                total  3      2500   0           250     $0.002800  $0.004200  $0.001400

                LANE   CALLS  ITEMS  COST
                live   1      1      $0.001400
                batch  2      3      $0.001400
                saved by the batch lane: $0.001400 (the same usage at live prices: $0.002800)
                batch prices for beta: half the live price (the price table has none)

                """)
        let json = try #require(
            try JSONSerialization.jsonObject(
                with: Data(try workspace.offpeak(["costs", "--json"]).stdout.utf8))
                as? [String: Any])
        let lanes = try #require(json["lanes"] as? [String: Any])
        #expect(
            Set(lanes.keys) == [
                "live", "batch", "batch_at_live_prices", "saved_by_batch", "half_price_models",
            ])
        #expect(lanes["half_price_models"] as? [String] == ["beta"])
        let saved = try #require(lanes["saved_by_batch"] as? Double)
        #expect(abs(saved - 0.0014) < 1e-12)
        let batch = try #require(lanes["batch"] as? [String: Any])
        #expect(batch["items"] as? Int == 3)
        #expect((batch["spend"] as? [String: Any])?["calls"] as? Int == 2)
        let live = try #require(lanes["live"] as? [String: Any])
        #expect(live["items"] as? Int == 1)
    }

    @Test func costsWithNoBatchEverMadeStayAsTheyWere() throws {
        let workspace = try TemporaryWorkspace()
        let store = try StoreTests.store(workspace)
        try store.runs.insert(run: StoreTests.run("r1"), requests: [])
        try store.insertLedger([
            Self.ledger(
                run: "r1", model: "alpha", items: 1, input: 1000, output: 100, dollars: 0.0014, naive: 0.0014)
        ])
        let report = try CostReport.make(store: store, by: .job)
        #expect(report.lanes == nil)
        #expect(
            report.text == """
                JOB    CALLS  INPUT  CACHE-READ  OUTPUT  COST       NAIVE      SAVED
                j      1      1000   0           100     $0.001400  $0.001400  $0.00
                total  1      1000   0           100     $0.001400  $0.001400  $0.00

                """)
    }

    @Test func queueSaysHowManyOfARunsWaitingItemsAreInAProviderBatch() throws {
        let workspace = try Self.workspace()
        let store = try StoreTests.store(workspace)
        let at = Date()
        _ = try store.schedules.deferJob(
            "j", run: try store.runs.run(id: "r1"), reasons: "on battery", host: "laptop", at: at)
        let report = try QueueReport.make(store: store, conditions: nil)
        #expect(report.deferred.map(\.itemsInBatch) == [4])
        let since = Timestamp.text(at)
        #expect(
            report.text == """
                JOB  RUN  WAITING                    SINCE\(String(repeating: " ", count: since.count - 5))  CHECKED\(String(repeating: " ", count: since.count - 7))  HOST    WHY
                j    r1   4 (4 in a provider batch)  \(since)  \(since)  laptop  on battery

                """)
    }
}
