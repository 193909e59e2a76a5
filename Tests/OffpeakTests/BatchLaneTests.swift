import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The batch lane end to end (issue 12): the built `offpeak` against `offpeak-sim`'s batch APIs,
/// on a real store. Serialized: each test times a batch's end and counts what the sim billed.
@Suite(.ownThreads, .serialized) struct BatchLaneTests {
    /// A workspace with the job `classify` of `count` tickets on `sim` as `provider` speaks to it:
    /// `sim` at its root; `openai` under `/v1`, declared to have OpenAI's Batch API there
    /// (`batch_api: true`), as a loopback server is not OpenAI; `groq` under `/openai/v1`, as Groq
    /// serves it (a sim started with `simArguments`); `mistral` under `/mistral/v1`.
    static func workspace(
        _ sim: SimProcess, count: Int, lane: String = "batch", extra: String = "", provider: String = "sim"
    ) throws -> TemporaryWorkspace {
        let base =
            ["openai": sim.url + "/v1", "groq": sim.url + "/openai/v1", "mistral": sim.url + "/mistral/v1"][
                provider]
            ?? sim.url
        return try workspace(
            base: base, provider: provider, count: count, lane: lane, extra: extra,
            config: provider == "openai" ? "batch_api: true\n" : "")
    }

    /// The same job with `provider` at `base` (a sim's URL, maybe with a path before the API's), and
    /// `config` added to offpeak.yaml.
    static func workspace(
        base: String, provider: String = "sim", count: Int, lane: String = "batch", extra: String = "",
        config: String = ""
    ) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: \(provider)\nbase_url: \(base)\n" + config)
        let items = (0..<count).map {
            "  - {id: t\($0), text: 'ticket \($0): my invoice \($0 % 7) is wrong'}"
        }
        try workspace.write(
            "jobs/classify.yaml",
            """
            kind: prompt
            system: Classify the support ticket as billing, bug or other. Answer with one word.
            template: "{{text}}"
            max_tokens: 20
            lane: \(lane)
            \(extra)
            items:
            \(items.joined(separator: "\n"))

            """)
        return workspace
    }

    /// The keys each provider's runs need; the sim takes any.
    static let keys = [
        "sim": [:], "openai": ["OPENAI_API_KEY": "sk-sim-batch-test"],
        "groq": ["GROQ_API_KEY": "gsk-sim-batch-test"], "mistral": ["MISTRAL_API_KEY": "sim-batch-test"],
    ]

    /// A sim's arguments for `provider`: Groq's API under `/openai`.
    static func simArguments(_ provider: String, _ arguments: [String]) -> [String] {
        provider == "groq" ? arguments + ["--path-prefix", "/openai"] : arguments
    }

    static func store(_ workspace: TemporaryWorkspace) throws -> Store {
        try workspace.openStore()
    }

    /// What the sim billed for batch answers, in dollars at the bundled batch prices of `model`.
    static func simBilledDollars(_ sim: SimProcess, model: String) throws -> Double {
        let billed = try #require(sim.stats()["billed_batch"] as? [String: Int])
        let price = try #require(PriceTable.bundled.cost(of: model))
        let usage = Usage(
            input: billed["input_tokens"] ?? 0, output: billed["output_tokens"] ?? 0,
            cacheRead: billed["cache_read_input_tokens"] ?? 0,
            cacheWrite: billed["cache_creation_input_tokens"] ?? 0,
            cacheWriteHour: billed["cache_creation_1h_input_tokens"] ?? 0)
        return price.dollars(for: usage, lane: .batch)
    }

    static func batchCounts(_ sim: SimProcess) throws -> [String: Double] {
        try #require(sim.stats()["batches"] as? [String: Double])
    }

    static func ledgerDollars(_ store: Store) throws -> Double {
        try store.value("SELECT COALESCE(SUM(dollars), 0) FROM ledger", as: Double.self)
    }

    /// The answers under `out/classify/`, by file name.
    static func answers(_ workspace: TemporaryWorkspace) -> [String: String] {
        workspace.snapshot("out/classify").filter { $0.key != "index.json" }
    }

    /// Waits past the sim's batch delay and the lane's first poll (2 s after submitting).
    static func waitForTheBatchToEnd() {
        Thread.sleep(forTimeInterval: 2.5)
    }

    @Test func aBatchJobIsSubmittedInOneRunCollectedByTheNextTickAndAnswersAsTheLiveLaneDoes()
        throws
    {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let workspace = try Self.workspace(sim, count: 300)
        let run = try workspace.offpeak(["run", "classify"])
        #expect(run.status == 75)
        #expect(
            run.stdout == """
                job classify: 0 of 300 items answered (0 now); 300 items in a provider batch (submitted 300 now, \
                collect with the next tick, or `offpeak run --wait`)
                outputs: out/classify/
                cost: $0.00 for 0 calls, 0 input and 0 output tokens (naive $0.00, saved $0.00)

                """)
        let store = try Self.store(workspace)
        let batches = try store.batches.openBatches()
        #expect(batches.count == 1 && batches.first?.state == .submitted && batches.first?.items == 300)
        #expect(try Self.batchCounts(sim)["created"] == 1)

        Self.waitForTheBatchToEnd()
        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 0, "\(tick.stderr)")
        #expect(tick.stdout == "classify [resume]: job classify: 300 of 300 items answered (300 now)\n")
        #expect(try store.batches.openBatches().isEmpty)
        #expect(try store.count("ledger") > 0)
        #expect(try store.count("ledger", where: "NOT batch_api") == 0)

        // Ledger dollars are what the sim billed, at batch prices (half the live ones).
        let model = try #require(batches.first?.model)
        let billed = try Self.simBilledDollars(sim, model: model)
        #expect(billed > 0)
        #expect(abs(try Self.ledgerDollars(store) - billed) < 1e-9)

        // The same job live, on a sim of its own: the same answers.
        let liveSim = try SimProcess()
        let live = try Self.workspace(liveSim, count: 300, lane: "live")
        #expect(try live.offpeak(["run", "classify"]).status == 0)
        #expect(try Self.batchCounts(liveSim)["created"] == 0)
        let batchAnswers = Self.answers(workspace)
        #expect(batchAnswers.count == 300)
        #expect(batchAnswers == Self.answers(live))
    }

    @Test func aTickBeforeTheBatchIsDueAsksNothingAndSaysWhenItWill() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "30"])
        let workspace = try Self.workspace(sim, count: 5)
        #expect(try workspace.offpeak(["run", "classify"]).status == 75)
        let store = try Self.store(workspace)
        let batch = try #require(try store.batches.openBatches().first)
        let due = try #require(batch.nextPollAt)
        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 75)
        #expect(
            tick.stdout
                == "classify [resume]: job classify: 5 items in a provider batch; its batches are asked "
                + "about next at \(Timestamp.text(due))\n")
        #expect(try store.batches.batch(id: batch.id)?.polls == batch.polls)
    }

    @Test(arguments: ["sim", "openai", "groq", "mistral"])
    func aBatchCreatedButNeverRecordedIsFoundAgainAndCollectedNotSentTwice(provider: String) throws {
        let sim = try SimProcess(arguments: Self.simArguments(provider, ["--batch-delay", "1"]))
        let workspace = try Self.workspace(sim, count: 20, provider: provider)
        let environment = Self.keys[provider] ?? [:]
        #expect(try workspace.offpeak(["run", "classify"], environment: environment).status == 75)
        // As if the process was killed after the create call and before storing its answer.
        let store = try Self.store(workspace)
        let batch = try #require(try store.batches.openBatches().first)
        try store.execute(
            """
            UPDATE provider_batches SET state = 'preparing', remote_id = NULL, submitted_at = NULL,
            next_poll_at = NULL, remote_status = NULL WHERE id = ?
            """, [batch.id])
        Self.waitForTheBatchToEnd()
        let tick = try workspace.offpeak(["tick"], environment: environment)
        #expect(
            tick.stdout == "classify [resume]: job classify: 20 of 20 items answered (20 now)\n",
            "\(tick.stderr)")
        #expect(try Self.batchCounts(sim)["created"] == 1)
        #expect(try store.batches.batch(id: batch.id)?.remoteId == batch.remoteId)
        #expect(try store.batches.batch(id: batch.id)?.state == .collected)
        #expect(Self.answers(workspace).count == 20)
    }

    @Test func aBatchPreparedButNeverCreatedIsSubmittedAgain() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let workspace = try Self.workspace(sim, count: 12)
        let store = try Self.store(workspace)
        #expect(try workspace.offpeak(["run", "classify"]).status == 75)
        let first = try #require(try store.batches.openBatches().first)
        // As if killed after committing a second batch, before its create call went out.
        let requests = try store.runs.requests(runID: first.runId).prefix(3).map(\.id)
        try store.execute(
            "DELETE FROM batch_items WHERE batch_id = ? AND request_id IN (?, ?, ?)",
            [first.id, requests[0], requests[1], requests[2]])
        try store.execute(
            "UPDATE requests SET state = 'pending' WHERE id IN (?, ?, ?)",
            [requests[0], requests[1], requests[2]])
        let never = try store.batches.prepareBatch(
            runID: first.runId, provider: "sim", model: first.model, requestIDs: Array(requests),
            worstDollars: 0.01, now: Date())
        Self.waitForTheBatchToEnd()
        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 75, "\(tick.stderr)")
        #expect(try store.batches.batch(id: never.id)?.state == .failed)
        #expect(try store.batches.batch(id: never.id)?.error == "never created at the provider")
        Self.waitForTheBatchToEnd()
        #expect(try workspace.offpeak(["tick"]).status == 0)
        #expect(try Self.batchCounts(sim)["created"] == 2)
        #expect(Self.answers(workspace).count == 12)
    }

    @Test func resultsCollectedAgainBookNothingTwice() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let workspace = try Self.workspace(sim, count: 30)
        let store = try Self.store(workspace)
        #expect(try workspace.offpeak(["run", "classify"]).status == 75)
        Self.waitForTheBatchToEnd()
        #expect(try workspace.offpeak(["tick"]).status == 0)
        let runID = try #require(try store.runs.runs().first?.id)
        let batch = try #require(try store.batches.batches(runID: runID).first)
        #expect(try store.batches.batchCount() == 1)
        let before = (try store.count("ledger"), try store.count("results"))
        // As if killed part-way through booking the results: ten are not booked yet, and the batch
        // is not marked collected.
        let unbooked = try store.batches.items(batchID: batch.id).prefix(10)
        for item in unbooked {
            let ledger =
                try store.values(
                    "SELECT ledger_id FROM results WHERE request_id = ?", [item.requestId], as: Int.self
                ).first ?? nil
            try store.execute("DELETE FROM results WHERE request_id = ?", [item.requestId])
            try store.execute("DELETE FROM ledger WHERE id = ?", [ledger])
            try store.execute("UPDATE requests SET state = 'in_batch' WHERE id = ?", [item.requestId])
            try store.execute(
                "UPDATE batch_items SET outcome = NULL WHERE batch_id = ? AND request_id = ?",
                [batch.id, item.requestId])
        }
        try store.execute(
            "UPDATE provider_batches SET state = 'ended', next_poll_at = ? WHERE id = ?", [Date(), batch.id])
        try store.execute("UPDATE runs SET state = 'waiting'")
        let tick = try workspace.offpeak(["tick"])
        #expect(
            tick.stdout == "classify [resume]: job classify: 30 of 30 items answered (10 now)\n",
            "\(tick.stderr)")
        let after = (try store.count("ledger"), try store.count("results"))
        #expect(after == before)
        #expect(abs(try Self.ledgerDollars(store) - Self.simBilledDollars(sim, model: batch.model)) < 1e-9)
        #expect(try Self.batchCounts(sim)["created"] == 1)
    }

    @Test func expiredErroredAndCanceledRequestsAloneGoAgainInANewBatch() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let workspace = try Self.workspace(sim, count: 10)
        let store = try Self.store(workspace)
        #expect(try workspace.offpeak(["run", "classify"]).status == 75)
        let batch = try #require(try store.batches.openBatches().first)
        let items = try store.batches.items(batchID: batch.id)
        let faults = [
            "expired": [items[0].customId], "errored": [items[1].customId], "canceled": [items[2].customId],
        ]
        _ = try sim.request(
            "POST", "/sim/batch-faults", body: try JSONSerialization.data(withJSONObject: faults))
        Self.waitForTheBatchToEnd()
        let partial = try workspace.offpeak(["tick"])
        #expect(
            partial.stdout == """
                classify [resume]: job classify: 7 of 10 items answered (7 now); 3 items in a provider batch \
                (submitted 3 now, collect with the next tick, or `offpeak run --wait`)

                """, "\(partial.stderr)")
        let outcomes = try store.batches.items(batchID: batch.id).map { $0.outcome }
        #expect(outcomes.prefix(3) == [.expired, .errored, .canceled])
        #expect(outcomes.dropFirst(3).allSatisfy { $0 == .succeeded })
        let again = try #require(try store.batches.openBatches().first)
        #expect(again.id != batch.id && again.items == 3)
        #expect(
            Set(try store.batches.items(batchID: again.id).map(\.requestId))
                == Set(items.prefix(3).map(\.requestId)))
        let retried = try store.runs.requests(runID: batch.runId).filter { $0.attempts > 0 }
        #expect(retried.count == 3)

        Self.waitForTheBatchToEnd()
        #expect(
            try workspace.offpeak(["tick"]).stdout
                == "classify [resume]: job classify: 10 of 10 items answered (3 now)\n")
        // Nothing billed for what the provider did not answer.
        #expect(try Self.batchCounts(sim)["succeeded"] == 10)
        #expect(abs(try Self.ledgerDollars(store) - Self.simBilledDollars(sim, model: batch.model)) < 1e-9)
    }

    @Test func aBatchsWorstCaseCountsAgainstTheBudgetFromTheMomentItIsSubmitted() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let workspace = try Self.workspace(
            sim, count: 10, extra: "budget: {max_dollars: 0.001}\nbatching: off")
        let run = try workspace.offpeak(["run", "classify"])
        #expect(run.status == 75)
        let store = try Self.store(workspace)
        let batch = try #require(try store.batches.openBatches().first)
        // Only what fits the budget at its worst was submitted; the rest waits for the budget.
        #expect(batch.items > 0 && batch.items < 10)
        #expect(batch.worstDollars <= 0.001)
        #expect(try store.batches.openBatchLoad(runID: batch.runId).dollars == batch.worstDollars)
        #expect(try store.runs.run(id: batch.runId)?.budgetStop == "max_dollars")

        // A second run while the batch is out submits nothing more: its worst case still counts.
        #expect(try workspace.offpeak(["run", "classify"]).status == 75)
        #expect(try store.batches.batches(runID: batch.runId).count == 1)
        Self.waitForTheBatchToEnd()
        #expect(try workspace.offpeak(["tick"]).status == 75)
        let spent = try Self.ledgerDollars(store)
        #expect(spent > 0 && spent <= 0.001)
        #expect(abs(spent - (try Self.simBilledDollars(sim, model: batch.model))) < 1e-9)
    }

    @Test func aBatchOutCountsAgainstATokenBudgetInTheNextPassToo() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "30"])
        let workspace = try Self.workspace(
            sim, count: 10, extra: "budget: {max_output_tokens: 100}\nbatching: off")
        #expect(try workspace.offpeak(["run", "classify"]).status == 75)
        let store = try Self.store(workspace)
        let batch = try #require(try store.batches.openBatches().first)
        #expect(batch.items == 5 && batch.worstOutputTokens == 100)
        #expect(try workspace.offpeak(["run", "classify"]).status == 75)
        #expect(try store.batches.batches(runID: batch.runId).count == 1)
        #expect(try store.runs.run(id: batch.runId)?.budgetStop == "max_output_tokens")
    }

    @Test func batchesOutAreCollectedWhenTheJobsConditionsNoLongerHoldAndNothingNewIsSent() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let sysfs = try SwitchableSysfs("ac-wifi")
        let workspace = try Self.workspace(
            sim, count: 10, extra: "constraints: {power: ac}\nbudget: {max_dollars: 0.001}\nbatching: off")
        let conditions = ["--sysfs-root", sysfs.root.path]
        #expect(try workspace.offpeak(["run", "classify"] + conditions).status == 75)
        let store = try Self.store(workspace)
        let batch = try #require(try store.batches.openBatches().first)
        #expect(batch.items < 10)
        // Unplugged: what the batch answered was paid for, and is collected; nothing new is sent.
        try sysfs.switchTo("battery-wifi")
        Self.waitForTheBatchToEnd()
        let tick = try workspace.offpeak(["tick"] + conditions)
        #expect(tick.status == 75)
        #expect(
            tick.stdout == "classify [resume]: job classify deferred part-way (waiting for external power); "
                + "\(batch.items) of 10 items answered (\(batch.items) now); `offpeak tick` goes on once they hold\n",
            "\(tick.stderr)")
        #expect(try store.batches.batch(id: batch.id)?.state == .collected)
        #expect(try store.batches.batches(runID: batch.runId).count == 1)
        #expect(try Self.batchCounts(sim)["created"] == 1)
    }

    @Test func aDeadlineTooCloseForABatchSendsTheCallsLive() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let workspace = try Self.workspace(sim, count: 6, extra: "deadline: 2h")
        let run = try workspace.offpeak(["run", "classify"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.batchCounts(sim)["created"] == 0)
        #expect(try sim.stats()["calls"] as? Int == 6)
    }

    @Test func requestsAnExpiredBatchLeftGoLiveOnceTheDeadlineIsTooClose() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let workspace = try Self.workspace(sim, count: 6, lane: "auto", extra: "deadline: 48h")
        let store = try Self.store(workspace)
        #expect(try workspace.offpeak(["run", "classify"]).status == 75)
        let batch = try #require(try store.batches.openBatches().first)
        let ids = try store.batches.items(batchID: batch.id).map(\.customId)
        _ = try sim.request(
            "POST", "/sim/batch-faults", body: try JSONSerialization.data(withJSONObject: ["expired": ids]))
        // A day and more later: two hours left.
        try store.execute("UPDATE runs SET deadline_at = ?", [Date() + 2 * 3600])
        Self.waitForTheBatchToEnd()
        let tick = try workspace.offpeak(["tick"])
        #expect(
            tick.stdout == "classify [resume]: job classify: 6 of 6 items answered (6 now)\n",
            "\(tick.stderr)")
        #expect(try Self.batchCounts(sim)["created"] == 1)
        #expect(try Self.batchCounts(sim)["expired"] == 6)
        #expect(try sim.stats()["calls"] as? Int == 6)
        #expect(try store.count("ledger") == 6)
        #expect(try store.count("ledger", where: "batch_api") == 0)
    }
}

/// `offpeak cancel`: the one way work is dropped, at the user's word.
@Suite(.ownThreads, .serialized) struct RunCancelTests {
    static func runID(_ workspace: TemporaryWorkspace) throws -> String {
        let store = try BatchLaneTests.store(workspace)
        return try #require(try store.values("SELECT id FROM runs", as: String.self).first ?? nil)
    }

    @Test func cancelingABatchRunCancelsItsBatchAndEndsTheRunOnceCollected() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "30"])
        let workspace = try BatchLaneTests.workspace(sim, count: 10)
        #expect(try workspace.offpeak(["run", "classify"]).status == 75)
        let run = try Self.runID(workspace)
        let cancel = try workspace.offpeak(["cancel", run])
        #expect(cancel.status == 0, "\(cancel.stderr)")
        #expect(
            cancel.stdout
                == "run \(run): 0 requests dropped; asked the provider to cancel 1 batch; 10 items in provider "
                + "batches are collected by the next tick, then the run ends canceled\n")
        Thread.sleep(forTimeInterval: 0.5)
        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 0, "\(tick.stderr)")
        #expect(
            tick.stdout
                == "classify [resume]: job classify: canceled by the user; 0 of 10 items answered (0 now)\n")
        let store = try BatchLaneTests.store(workspace)
        #expect(try store.runs.run(id: run)?.state == .canceled)
        #expect(try store.runs.requests(runID: run).allSatisfy { $0.state == .canceled })
        #expect(try BatchLaneTests.batchCounts(sim)["canceled"] == 10)
        #expect(try BatchLaneTests.ledgerDollars(store) == 0)
        #expect(try workspace.offpeak(["tick"]).stdout == "nothing to do\n")
    }

    @Test func cancelingAnInterruptedLiveRunDropsItsPendingItemsAtOnce() throws {
        let sim = try SimProcess()
        let workspace = try BatchLaneTests.workspace(
            sim, count: 6, lane: "live", extra: "budget: {max_calls: 2}\nbatching: off")
        #expect(try workspace.offpeak(["run", "classify"]).status == 75)
        let run = try Self.runID(workspace)
        let cancel = try workspace.offpeak(["cancel", run])
        #expect(cancel.stdout == "run \(run): 4 requests dropped; the run is canceled\n", "\(cancel.stderr)")
        let store = try BatchLaneTests.store(workspace)
        #expect(try store.runs.run(id: run)?.state == .canceled)
        #expect(try store.runs.run(id: run)?.itemsDone == 2)
        #expect(try workspace.offpeak(["tick"]).stdout == "nothing to do\n")
        let again = try workspace.offpeak(["cancel", run])
        #expect(again.status == 64)
        #expect(again.stderr == "offpeak: run \(run) is canceled: there is nothing to cancel\n")
        #expect(try workspace.offpeak(["cancel", "no-such-run"]).status == 64)
    }
}
