import Foundation
import Testing

@testable import Offpeak

/// What `BatchStore` tells the reports and the scheduler (listings, counts, the poll-only wait) and
/// the fitness it keeps per model, the same scenarios on both engines (`StoreEngine`).
struct BatchReadsRoleTests {
    typealias F = RoleFixtures

    @Test(arguments: StoreEngine.allCases)
    func listingsShowOpenBatchesNewestFirstWithTheirJobs(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1", job: "alpha"), requests: F.requests(3, run: "r1"))
        try roles.runs.insert(run: F.run("r2", job: "beta"), requests: F.requests(2, run: "r2"))
        let a = try roles.batches.prepareBatch(
            runID: "r1", provider: "sim", model: "m", requestIDs: ["r1/i0"], worstDollars: 1, host: "box-a",
            now: F.t0)
        let b = try roles.batches.prepareBatch(
            runID: "r2", provider: "sim", model: "m", requestIDs: ["r2/i0", "r2/i1"], worstDollars: 2,
            host: "laptop", now: F.t0 + 10)
        let c = try roles.batches.prepareBatch(
            runID: "r1", provider: "sim", model: "m", calls: [["r1/i1"]], audits: [], worstDollars: 3,
            worstTokens: (10, 20), host: "box-b", now: F.t0 + 20)
        _ = try roles.batches.commitBatchCall(
            batchID: a.id, customID: "\(a.id)_0", .again(.expired, reason: "expired"), run: nil,
            now: F.t0 + 30)
        #expect(try roles.batches.markCollected(batchID: a.id, now: F.t0 + 30))

        let open = try roles.batches.batchListings(all: false)
        #expect(open.map(\.batch.id) == [c.id, b.id] && open.map(\.job) == ["alpha", "beta"])
        #expect(open.first?.batch == (try roles.batches.batch(id: c.id)))
        let every = try roles.batches.batchListings(all: true)
        #expect(every.map(\.batch.id) == [c.id, b.id, a.id])
        #expect(every.last?.batch.state == .collected)
        #expect(every.map(\.batch.host) == ["box-b", "laptop", "box-a"], "the host that sent each")
        #expect(try roles.batches.batch(id: a.id)?.host == "box-a")
        #expect(try roles.batches.batchListings(all: true, limit: 1).map(\.batch.id) == [c.id])
        #expect(try roles.batches.batchCount() == 3)
        #expect(try roles.batches.openBatches().map(\.id) == [b.id, c.id])
        #expect(try roles.batches.batches(runID: "r1").map(\.id) == [a.id, c.id])
        #expect(try roles.batches.openBatchLoad(runID: "r1").dollars == 3)
        #expect(try roles.batches.requestsInBatch(runID: "r2") == 2)
        #expect(try roles.batches.knownRemoteIDs().isEmpty)
    }

    @Test(arguments: StoreEngine.allCases)
    func aRunOnlyWaitsForItsBatchesPollWhenNothingElseIsToDo(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let (_, requests) = try BatchStoreRoleTests.run(roles, count: 2)
        #expect(try roles.batches.nextBatchPollOnly(runID: "r1", now: F.t0) == nil)
        let first = try roles.batches.prepareBatch(
            runID: "r1", provider: "sim", model: "m", requestIDs: [requests[0].id], worstDollars: 1, now: F.t0
        )
        try roles.batches.recordSubmitted(batchID: first.id, remoteID: "b1", now: F.t0, nextPoll: F.t0 + 60)
        // A request still pending: the run has work.
        #expect(try roles.batches.nextBatchPollOnly(runID: "r1", now: F.t0) == nil)
        let second = try roles.batches.prepareBatch(
            runID: "r1", provider: "sim", model: "m", requestIDs: [requests[1].id], worstDollars: 1,
            now: F.t0 + 1)
        #expect(try roles.batches.nextBatchPollOnly(runID: "r1", now: F.t0) == nil)
        try roles.batches.recordSubmitted(batchID: second.id, remoteID: "b2", now: F.t0, nextPoll: F.t0 + 30)
        #expect(try roles.batches.nextBatchPollOnly(runID: "r1", now: F.t0) == F.t0 + 30)
        #expect(try roles.batches.nextBatchPollOnly(runID: "r1", now: F.t0 + 30) == nil)
        #expect(try roles.batches.knownRemoteIDs() == ["b1", "b2"])
        #expect(try roles.batches.nextBatchPollOnly(runID: "other", now: F.t0) == nil)
    }

    @Test(arguments: StoreEngine.allCases)
    func fitnessIsReadChangedAndListedNewestFirst(engine: StoreEngine) throws {
        let roles = try engine.roles()
        #expect(try roles.batches.batchFitness(provider: "sim", model: "m") == nil)
        #expect(try roles.batches.batchFitnessRecords().isEmpty)
        let first = try roles.batches.updateBatchFitness(provider: "sim", model: "m", at: F.t0) {
            $0.record(asked: 4, kept: 1, rejected: ["missing": 3], structured: true, at: F.t0)
        }
        #expect(first.cap == 2 && first.prompts == 1 && first.rejections == ["missing": 3])
        #expect(try roles.batches.batchFitness(provider: "sim", model: "m") == first)
        let second = try roles.batches.updateBatchFitness(provider: "sim", model: "m", at: F.t0 + 10) {
            $0.record(asked: 2, kept: 0, rejected: ["prose": 2], structured: true, at: F.t0 + 10)
            $0.refuseStructured("no json_schema", form: .jsonSchema, at: F.t0 + 10)
        }
        #expect(
            second.prompts == 2 && second.itemsAsked == 6 && second.rejections == ["missing": 3, "prose": 2])
        #expect(second.structuredRefusal == "no json_schema" && second.jsonObjectRefusal == nil)
        #expect(try roles.batches.batchFitness(provider: "sim", model: "m") == second)
        let other = try roles.batches.updateBatchFitness(provider: "sim", model: "n", at: F.t0 + 5) {
            $0.record(asked: 3, kept: 3, rejected: [:], structured: false, at: F.t0 + 5)
        }
        #expect(try roles.batches.batchFitness(provider: "other", model: "m") == nil)
        #expect(try roles.batches.batchFitnessRecords() == [second, other])
    }
}
