import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A round the cache answered whole is not the end of the run (issue 21, item 0): a run over more
/// than a round of items, answered from the cache, used to stop after its first round and say it
/// was done, its other requests left pending for ever. Rounds of 5 here stand for the 1,024 of a
/// real run.
@Suite(.ownThreads) struct CachedRoundsTests {
    static let round = 5

    static func workspace(sim: SimProcess, items: Int) throws -> TemporaryWorkspace {
        try BatchedRunTests.workspace(sim: sim, count: items, batching: "off")
    }

    static func run(_ workspace: TemporaryWorkspace, job: String = "classify") throws -> RunOutcome {
        let context = try JobRunnerIntegrationTests.context(workspace)
        var options = JobRunner.Options()
        options.roundRequests = round
        return try context.run(try context.loadJob(job), options: options)
    }

    /// The same job's spec under another name, over the items `keep` picks: its answers fill the
    /// cache for those items only.
    static func copy(_ workspace: TemporaryWorkspace, as name: String, keep: (Int) -> Bool) throws {
        let spec = try String(
            contentsOf: workspace.root.appendingPathComponent("jobs/classify.yaml"), encoding: .utf8)
        let lines = spec.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            guard let range = line.range(of: "{id: t") else { return true }
            let digits = line[range.upperBound...].prefix { $0.isNumber }
            return Int(digits).map(keep) ?? true
        }
        try workspace.write(
            "jobs/\(name).yaml",
            lines.joined(separator: "\n").replacingOccurrences(of: "name: classify", with: "name: \(name)"))
    }

    static func pending(_ workspace: TemporaryWorkspace, run: String) throws -> Int {
        let store = try JobRunnerIntegrationTests.context(workspace).openStore()
        return try store.runs.requests(runID: run).filter { $0.state != .done }.count
    }

    @Test func roundsAnsweredWhollyFromTheCacheGoOnToTheLastItem() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, items: 12)
        let first = try Self.run(workspace)
        #expect(first.status == .ok, "\(first.message)")
        #expect(try ConcurrentRunTests.stat(sim, "calls") == 12)

        let again = try Self.run(workspace)
        #expect(again.status == .ok, "\(again.message)")
        #expect(again.run.state == .completed)
        #expect(again.message == "job classify: 12 of 12 items answered (12 now)")
        #expect(again.run.itemsCached == 12)
        #expect(try Self.pending(workspace, run: again.run.id) == 0)
        #expect(try ConcurrentRunTests.stat(sim, "calls") == 12, "every answer came from the cache")
        #expect(BatchedRunTests.answers(workspace).count == 12)
    }

    /// Items 1-5 (the first round) and 8 are cached by another job: the first round is answered
    /// whole from the cache, the second partly, the third not at all.
    @Test func roundsAnsweredPartlyFromTheCacheCallOnlyForTheRest() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, items: 12)
        try Self.copy(workspace, as: "warm") { $0 <= 5 || $0 == 8 }
        #expect(try Self.run(workspace, job: "warm").status == .ok)
        #expect(try ConcurrentRunTests.stat(sim, "calls") == 6)

        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.message == "job classify: 12 of 12 items answered (12 now)")
        #expect(outcome.run.itemsCached == 6)
        #expect(try Self.pending(workspace, run: outcome.run.id) == 0)
        #expect(try ConcurrentRunTests.stat(sim, "calls") == 12, "6 cached, 6 asked")
    }

    /// Twelve due retries, more than two rounds of them, all answered by the cache in one pass.
    @Test func dueRetriesOverSeveralRoundsAreAllAnswered() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, items: 12)
        let first = try Self.run(workspace)
        #expect(first.status == .ok)
        // As a pass that lost its answers would leave it: every item retrying, due now.
        let store = try JobRunnerIntegrationTests.context(workspace).openStore()
        try store.execute(
            "DELETE FROM results WHERE request_id IN (SELECT id FROM requests WHERE run_id = ?)",
            [first.run.id])
        try store.execute(
            "UPDATE requests SET state = 'retrying', next_attempt_at = NULL, error = 'lost' WHERE run_id = ?",
            [first.run.id])
        try store.execute(
            "UPDATE runs SET state = 'interrupted', reason = 'lost' WHERE id = ?", [first.run.id])

        let resumed = try Self.run(workspace)
        #expect(resumed.run.id == first.run.id, "the same run, resumed")
        #expect(resumed.status == .ok, "\(resumed.message)")
        #expect(resumed.message == "job classify: 12 of 12 items answered (12 now)")
        #expect(try Self.pending(workspace, run: first.run.id) == 0)
        #expect(try ConcurrentRunTests.stat(sim, "calls") == 12, "the retries were answered by the cache")
    }

    /// Whatever else went wrong, a pass that ends with requests not sent, and no stop to say why,
    /// leaves its run resumable.
    @Test func aPassWithRequestsLeftIsNeverCompleted() {
        var facts = RunVerdict.Facts(
            job: "classify", itemsDone: 1024, itemsTotal: 1200, itemsFailed: 0, answeredNow: 1024)
        facts.pending = 176
        let verdict = RunVerdict.decide(facts, stop: nil)
        #expect(verdict.state == .interrupted)
        #expect(verdict.status == .temporaryFailure)
        #expect(
            verdict.message
                == "job classify: 1024 of 1200 items answered (1024 now); 176 items not sent yet; run it again "
                + "to do the rest")
    }
}
