import Foundation
import Testing

@testable import Offpeak

/// `BatchStore`'s preparing batches, the same scenarios on both engines (`StoreEngine`): which
/// requests a batch may take, and a batch the provider never created given up.
struct BatchPreparingRoleTests {
    typealias F = RoleFixtures

    @Test(arguments: StoreEngine.allCases)
    func aBatchTakesOnlyPendingOrRetryingRequestsAndAbandoningReturnsThem(engine: StoreEngine) throws {
        let roles = try engine.roles()
        var requests = F.requests(4, run: "r1")
        requests[3].state = .retrying
        requests[3].nextAttemptAt = F.t0 + 3600
        try roles.runs.insert(run: F.run("r1"), requests: requests)
        let batch = try roles.batches.prepareBatch(
            runID: "r1", provider: "openai", model: "m", requestIDs: [requests[1].id, requests[3].id],
            worstDollars: 1, now: F.t0)
        #expect(try BatchStoreRoleTests.states(roles) == [.pending, .inBatch, .pending, .inBatch])
        #expect(try roles.runs.requests(runID: "r1")[3].nextAttemptAt == nil)
        #expect(
            try roles.runs.pendingRequests(runID: "r1", limit: 10).map(\.id) == [
                requests[0].id, requests[2].id,
            ])
        // A request already in a batch, given twice, or of another run: refused, nothing committed.
        for ids in [[requests[0].id, requests[1].id], [requests[0].id, requests[0].id], ["r9/i0"]] {
            #expect(throws: OffpeakError.self) {
                try roles.batches.prepareBatch(
                    runID: "r1", provider: "openai", model: "m", requestIDs: ids, worstDollars: 1,
                    now: F.t0 + 1)
            }
        }
        // A date the store cannot hold: refused before anything is written.
        #expect(throws: OffpeakError.self) {
            try roles.batches.prepareBatch(
                runID: "r1", provider: "openai", model: "m", requestIDs: [requests[0].id], worstDollars: 1,
                now: Date(timeIntervalSince1970: 300_000_000_000))
        }
        #expect(try roles.batches.batches(runID: "r1").map(\.id) == [batch.id])
        #expect(try roles.batches.batchCount() == 1)
        #expect(try BatchStoreRoleTests.states(roles) == [.pending, .inBatch, .pending, .inBatch])

        // The process died before creating it; reconciliation found nothing at the provider.
        #expect(try roles.batches.preparingBatches().map(\.id) == [batch.id])
        try roles.batches.abandonPreparing(batchID: batch.id, reason: "never created", now: F.t0 + 5)
        #expect(try BatchStoreRoleTests.states(roles) == [.pending, .pending, .pending, .pending])
        #expect(try roles.runs.requests(runID: "r1")[1].updatedAt == F.t0 + 5)
        let failed = try #require(try roles.batches.batch(id: batch.id))
        #expect(failed.state == .failed && failed.error == "never created" && !failed.isOpen)
        #expect(try roles.batches.preparingBatches().isEmpty)
        #expect(try !roles.batches.hasOpenBatches(runID: "r1"))
        #expect(try !roles.batches.markCollected(batchID: batch.id, now: F.t0 + 6))
        #expect(throws: OffpeakError.self) {
            try roles.batches.abandonPreparing(batchID: "ob000000000000", reason: "x", now: F.t0)
        }

        // A batch the provider did create is past preparing: left alone.
        let created = try roles.batches.prepareBatch(
            runID: "r1", provider: "openai", model: "m", requestIDs: [requests[0].id], worstDollars: 1,
            now: F.t0 + 7)
        try roles.batches.recordSubmitted(
            batchID: created.id, remoteID: "batch_a", now: F.t0 + 8, nextPoll: F.t0)
        try roles.batches.abandonPreparing(batchID: created.id, reason: "never created", now: F.t0 + 9)
        #expect(try roles.batches.batch(id: created.id)?.state == .submitted)
        #expect(try BatchStoreRoleTests.states(roles) == [.inBatch, .pending, .pending, .pending])
    }
}
