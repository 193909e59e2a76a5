import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The batch audit in a run against offpeak-sim: a model whose batched answers go wrong after the
/// fourth item (`--degrading-model`) is caught by the first probe, its wrong answers are replaced
/// or asked again, and its prompts shrink to a size that holds; a model that holds up keeps its size.
struct BatchAuditRunTests {
    static let model = "claude-sonnet-4-5"

    /// `BatchedRunTests`' ticket job, 48 items in prompts of up to 8, with `audit` as given.
    static func workspace(sim: SimProcess, audit: String) throws -> TemporaryWorkspace {
        let workspace = try BatchedRunTests.workspace(sim: sim, count: 48, batching: "{max_items: 8}")
        let spec = try #require(workspace.read("jobs/classify.yaml"))
        try workspace.write(
            "jobs/classify.yaml", spec.replacingOccurrences(of: "items:\n", with: "audit: \(audit)\nitems:\n")
        )
        return workspace
    }

    /// The answers each item gets alone, from a sim that does not degrade.
    static func reference() throws -> [String: String] {
        let sim = try SimProcess()
        let workspace = try BatchedRunTests.workspace(sim: sim, count: 48, batching: "off")
        _ = try BatchedRunTests.run(workspace)
        return BatchedRunTests.answers(workspace)
    }

    static func batchedCalls(_ sim: SimProcess) throws -> Int {
        (try sim.stats()["batched_calls"] as? NSNumber)?.intValue ?? -1
    }

    @Test func aModelThatGoesWrongAfterTheFourthItemIsCaughtByTheFirstProbe() throws {
        let sim = try SimProcess(arguments: ["--degrading-model", "\(Self.model):neighbour:4", "--seed", "7"])
        // The probe alone must fit the share: 48 items are too few for 3 % of them.
        let workspace = try Self.workspace(sim: sim, audit: "{rate: 0.0001, max_share: 1}")
        try workspace.oneCallInFlight()
        let outcome = try BatchedRunTests.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 48)
        #expect(BatchedRunTests.answers(workspace) == (try Self.reference()), "every answer right")
        // A probe of 8 audited at places 1, 3, 5, 8 (two wrong), its 4 unchecked items asked again;
        // a probe of 4 audited whole (all right); the other 40 items in 10 prompts of 4.
        #expect(try Self.batchedCalls(sim) == 12)
        #expect(outcome.spend.calls == 20)
        let store = try workspace.openStore()
        let record = try #require(
            try store.audits.auditRecord(job: "classify", provider: "sim", model: Self.model))
        #expect(record.itemLimit(at: Date()) == 4)
        #expect(record.decisions.map(\.kind) == [.halved, .proven])
        #expect(record.decisions.map(\.size) == [8, 4])
        let rows = try store.audits.auditRows(job: "classify")
        #expect(rows.map(\.batchSize) == [8, 8, 8, 8, 4, 4, 4, 4])
        #expect(rows.map(\.position) == [1, 3, 5, 8, 1, 2, 3, 4])
        #expect(rows.map(\.agreed) == [true, true, false, false, true, true, true, true])
        #expect(rows.map(\.keptSingle) == [false, false, true, true, false, false, false, false])
        let spend = try store.audits.auditSpend(job: "classify", runID: outcome.run.id)
        #expect(spend.calls == 8 && spend.naiveDollars == 0 && spend.dollars > 0)

        // The next run of the job starts at 4 a prompt, proven: no probe, no audit call.
        let spec = try #require(workspace.read("jobs/classify.yaml"))
        try workspace.write("jobs/classify.yaml", spec.replacingOccurrences(of: "Ticket", with: "Case"))
        _ = try sim.request("POST", "/sim/reset")
        let again = try BatchedRunTests.run(workspace)
        #expect(again.spend.calls == 12)
        #expect(try Self.batchedCalls(sim) == 12)
    }

    @Test func aModelThatHoldsUpKeepsItsSizeAfterOneProbe() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, audit: "{rate: 0.0001, max_share: 1}")
        let outcome = try BatchedRunTests.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(try Self.batchedCalls(sim) == 6)
        #expect(outcome.spend.calls == 10, "6 prompts of 8 and the probe's 4 audit calls")
        let store = try workspace.openStore()
        let record = try #require(
            try store.audits.auditRecord(job: "classify", provider: "sim", model: Self.model))
        #expect(record.itemLimit(at: Date()) == nil)
        #expect(record.decisions.map(\.kind) == [.proven])
        #expect(try store.audits.auditRows(job: "classify").allSatisfy(\.agreed))
    }

    @Test func withoutTheAuditTheWrongAnswersStay() throws {
        let sim = try SimProcess(arguments: ["--degrading-model", "\(Self.model):neighbour:4", "--seed", "7"])
        let workspace = try Self.workspace(sim: sim, audit: "off")
        let outcome = try BatchedRunTests.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.spend.calls == 6)
        let reference = try Self.reference()
        let answers = BatchedRunTests.answers(workspace)
        #expect(answers.filter { reference[$0.key] != $0.value }.count == 24, "places 5 to 8 of each prompt")
    }

    /// In the batch lane the probe's audit requests travel in the same provider batch; the failed
    /// size's items that no audit checked are asked again, in prompts of 4, in the next batch.
    @Test func inTheBatchLaneTheProbeTravelsInTheBatchAndAFailedSizeIsAskedAgain() throws {
        let sim = try SimProcess(arguments: [
            "--degrading-model", "\(Self.model):neighbour:4", "--seed", "7", "--batch-delay", "0",
        ])
        let workspace = try Self.workspace(sim: sim, audit: "{rate: 0.0001, max_share: 1}")
        let spec = try #require(workspace.read("jobs/classify.yaml"))
        try workspace.write(
            "jobs/classify.yaml", spec.replacingOccurrences(of: "items:\n", with: "lane: batch\nitems:\n"))
        let run = try workspace.offpeak(["run", "classify", "--wait"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(BatchedRunTests.answers(workspace) == (try Self.reference()), "every answer right")
        // Batch 1: 6 prompts of 8 and the probe's 4 audit requests; batch 2: the 44 items no audit
        // checked in 11 prompts of 4 and that size's probe of 4.
        let batches = try #require(sim.stats()["batches"] as? [String: Double])
        #expect(batches["succeeded"] == 25)
        let store = try workspace.openStore()
        let record = try #require(
            try store.audits.auditRecord(job: "classify", provider: "sim", model: Self.model))
        #expect(record.itemLimit(at: Date()) == 4)
        #expect(record.decisions.map(\.kind) == [.halved, .proven])
        let rows = try store.audits.auditRows(job: "classify")
        #expect(rows.map(\.batchSize) == [8, 8, 8, 8, 4, 4, 4, 4])
        #expect(rows.map(\.position) == [1, 3, 5, 8, 1, 2, 3, 4])
        #expect(rows.map(\.agreed) == [true, true, false, false, true, true, true, true])
        let spend = try store.audits.auditSpend(job: "classify", runID: nil)
        #expect(spend.calls == 8 && spend.naiveDollars == 0 && spend.dollars > 0)
        #expect(
            try store.values("SELECT COUNT(*) FROM ledger WHERE audit AND batch_api", as: Int.self) == [8])
    }

    @Test func aSmallRunWithTheDefaultShareIsNotAudited() throws {
        let sim = try SimProcess()
        let workspace = try BatchedRunTests.workspace(sim: sim, count: 48, batching: "{max_items: 8}")
        let outcome = try BatchedRunTests.run(workspace)
        #expect(outcome.spend.calls == 6, "a probe would cost more than 3 % of so small a run")
        #expect(try workspace.openStore().audits.auditRows(job: "classify").isEmpty)
    }
}
