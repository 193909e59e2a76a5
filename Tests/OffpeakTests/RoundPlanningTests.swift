import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Planning a round at a time (issue 11, item 6): a pass reads and plans at most a round of stored
/// requests, so its time per call and its memory do not grow with the backlog; the end of a pass
/// reads outlines and counts, never every request's payload.
@Suite(.ownThreads) struct RoundPlanningTests {
    static func workspace(sim: SimProcess, items: Int) throws -> TemporaryWorkspace {
        try BatchedRunTests.workspace(sim: sim, count: items, batching: "{max_items: 4}")
    }

    static func run(_ workspace: TemporaryWorkspace, round: Int?) throws -> RunOutcome {
        let context = try JobRunnerIntegrationTests.context(workspace)
        var options = JobRunner.Options()
        if let round { options.roundRequests = round }
        return try context.run(try context.loadJob("classify"), options: options)
    }

    /// 23 tickets in batches of 4 read 5 at a time: rounds of 5, 5, 5, 5 and 3 tickets take 2, 2,
    /// 2, 2 and 1 calls; planned whole, 6. Every ticket is answered either way, alike.
    @Test func aBacklogIsPlannedARoundAtATime() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, items: 23)
        let outcome = try Self.run(workspace, round: 5)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 23)
        let calls = try ConcurrentRunTests.stat(sim, "calls")
        #expect(calls == 9, "\(calls) calls")

        let wholeSim = try SimProcess()
        let whole = try Self.workspace(sim: wholeSim, items: 23)
        #expect(try Self.run(whole, round: nil).status == .ok)
        let wholeCalls = try ConcurrentRunTests.stat(wholeSim, "calls")
        #expect(wholeCalls == 6, "\(wholeCalls) calls")
        let answers = BatchedRunTests.answers(workspace)
        #expect(answers.count == 23 && answers == BatchedRunTests.answers(whole))
    }

    /// What a pass's verdict names: per state, how many and which one (for retries, the next due,
    /// a retry with no time first).
    @Test func aSummaryCountsAStateAndNamesItsFirst() throws {
        let workspace = try TemporaryWorkspace()
        let store = try StoreTests.store(workspace)
        var requests = (0..<6).map { StoreTests.request("i\($0)", run: "r1", position: $0) }
        let now = Date()
        requests[1].state = .retrying
        requests[1].nextAttemptAt = now + 120
        requests[1].error = "later"
        requests[4].state = .retrying
        requests[4].nextAttemptAt = now + 30
        requests[4].error = "sooner"
        requests[2].state = .failed
        requests[2].error = "first failure"
        requests[5].state = .failed
        requests[5].error = "second failure"
        try store.runs.insert(run: StoreTests.run("r1", state: .running), requests: requests)

        let retrying = try store.runs.summary(runID: "r1", state: .retrying)
        #expect(retrying.count == 2 && retrying.first?.itemId == "i4" && retrying.first?.error == "sooner")
        let failed = try store.runs.summary(runID: "r1", state: .failed)
        #expect(failed.count == 2 && failed.first?.error == "first failure")
        #expect(try store.runs.summary(runID: "r1", state: .waiting) == StateSummary())
        #expect(try store.runs.summary(runID: "r1", state: .pending).count == 2)

        try store.execute("UPDATE requests SET next_attempt_at = NULL WHERE id = ?", [requests[1].id])
        #expect(
            try store.runs.summary(runID: "r1", state: .retrying).first?.itemId == "i1", "no time: due first")

        let outlines = try store.runs.outlines(runID: "r1")
        #expect(outlines.map(\.itemId) == ["i0", "i1", "i2", "i3", "i4", "i5"])
        #expect(outlines[2] == RequestOutline(requests[2]))
        #expect(try store.runs.dueRetries(runID: "r1", by: now + 3600, limit: 1).map(\.itemId) == ["i1"])
    }

    /// The reads of a round and of a pass's end each take a range of an index.
    @Test func aRoundAndAPassesEndReadIndexesOnly() throws {
        let (store, statements) = try StoreQueryPlanTests.traced { store, _ in
            _ = try store.runs.pendingRequests(runID: "r1", limit: 1024)
            _ = try store.runs.dueRetries(runID: "r1", by: Date(), limit: 1024)
            for state in [RequestRecord.State.retrying, .waiting, .failed] {
                _ = try store.runs.summary(runID: "r1", state: state)
            }
            _ = try store.runs.outlines(runID: "r1")
            try store.runs.forEachResult(runID: "r1") { _ in }
        }
        let plans = try StoreQueryPlanTests.expectIndexed(store, statements)
        #expect(plans.contains("requests_by_run_state"), "\(plans)")
    }
}
