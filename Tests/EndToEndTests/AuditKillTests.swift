import Foundation
import OffpeakTestSupport
import Testing

/// The batch audit survives `kill -9`: a run killed at random moments (between a probe's batched
/// answer and its audits, mid-audit, between a failed size and asking its items again) ends with
/// every answer right, as the same items asked alone get them.
@Suite(.serialized) struct AuditKillTests {
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
}
