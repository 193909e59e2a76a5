import Foundation
import OffpeakTestSupport
import Testing

/// The batch audit survives `kill -9`: a run killed at random moments (between a probe's batched
/// answer and its audits, mid-audit, between a failed size and asking its items again) ends with
/// every answer right, as the same items asked alone get them.
@Suite(.ownThreads, .serialized) struct AuditKillTests {
    @Test func killsMidAuditLeaveNoWrongAnswerBehind() throws {
        let count = 48
        let referenceSim = try SimProcess()
        let reference = try AuditCommandTests.workspace(on: referenceSim, count: count, batching: "off")
        #expect(try reference.offpeak(["run", "classify"]).status == 0)
        let expected = TickTests.answers(reference, job: "classify")
        #expect(expected.count == count)

        let sim = try SimProcess(arguments: [
            "--degrading-model", "claude-sonnet-4-5:wrong-label:4", "--seed", "7", "--latency-ms", "150",
        ])
        let workspace = try AuditCommandTests.workspace(on: sim, count: count)
        let delays = try TickTests.killAtRandom(workspace, job: "classify", kills: 3, after: 0.4...1.6)
        let ticks = try TickTests.tickUntilDone(workspace, limit: 10)
        #expect(ticks.last?.result.status == 0, "kills after \(delays) s")
        let answers = TickTests.answers(workspace, job: "classify")
        #expect(answers.count == count, "kills after \(delays) s")
        let wrong = answers.filter { expected[$0.key] != $0.value }.keys.sorted()
        #expect(wrong.isEmpty, "kills after \(delays) s: \(wrong)")
        let runs = try TickTests.runs(workspace)
        #expect(runs.count == 1 && runs.first?["items_done"] as? Int == count, "kills after \(delays) s")
    }

    /// Issue 46, item 3: the audits a batched answer calls for are written with its commit, so a
    /// kill between that commit and the audit calls leaves them in the store, and the next pass
    /// asks each of them once. The kill comes as soon as the first audits are queued: each audit
    /// call takes the sim 400 ms, one at a time.
    @Test func auditsQueuedWithABatchedAnswerSurviveAKillBeforeTheyAreAsked() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "400"])
        let workspace = try AuditCommandTests.workspace(on: sim, count: 16)
        let run = try TickTests.start(["run", "classify"], in: workspace)
        func count(_ table: String) throws -> Int {
            Int(try workspace.storeValues("SELECT count(*) FROM \(table)")) ?? -1
        }
        let deadline = Date() + 60
        var queued = 0
        while queued <= 0, Date() < deadline {
            queued = (try? count("audit_queue")) ?? 0
            if queued <= 0 { Thread.sleep(forTimeInterval: 0.02) }
        }
        run.signal(SIGKILL)
        _ = run.wait(timeout: 10)
        let left = try count("audit_queue")
        #expect(left > 0, "the queued audits outlived the kill (\(queued) seen queued)")
        let audited = try count("audit_items")

        let ticks = try TickTests.tickUntilDone(workspace, limit: 5)
        #expect(ticks.last?.result.status == 0)
        #expect(try count("audit_queue") == 0, "each was asked")
        #expect(try count("audit_items") >= audited + left, "and recorded")
        #expect(
            try workspace.storeValues("SELECT count(*) - count(DISTINCT request_id) FROM audit_items") == "0",
            "once each")
    }
}
