import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The batch lane's bookkeeping on a real store: nothing lost at any step, nothing booked twice.
@Suite(.ownThreads) struct StoreBatchesTests {
    /// A store with run `r1` (running) and `count` pending spec requests.
    static func store(_ workspace: TemporaryWorkspace, count: Int = 4) throws -> (Store, [RequestRecord]) {
        let store = try StoreTests.store(workspace)
        let requests = (0..<count).map { StoreTests.request("i\($0)", run: "r1", position: $0) }
        try store.runs.insert(run: StoreTests.run("r1", state: .running), requests: requests)
        return (store, requests)
    }

    static func succeeded(_ request: RequestRecord, dollars: Double) -> BatchBooking {
        .answered(
            ledger: StoreCountersTests.ledger(
                run: "r1", items: 1, hit: false, failed: false, dollars: dollars),
            results: [StoreCountersTests.result(request, cached: false)])
    }

    static func states(_ store: Store) throws -> [RequestRecord.State] {
        try store.runs.requests(runID: "r1").map(\.state)
    }

    @Test func aBatchGoesFromPreparedToCollectedWithItsCountersRightAtEachStep() throws {
        let workspace = try TemporaryWorkspace()
        let (store, requests) = try Self.store(workspace, count: 3)
        let now = Date()
        let batch = try store.batches.prepareBatch(
            runID: "r1", provider: "anthropic", model: "m", requestIDs: requests.map(\.id), worstDollars: 0.5,
            now: now)
        #expect(batch.id.wholeMatch(of: /ob[0-9a-f]{12}/) != nil)
        #expect(try store.batches.batch(id: batch.id)?.state == .preparing)
        let items = try store.batches.items(batchID: batch.id)
        #expect(items.map(\.customId) == (0..<3).map { "\(batch.id)_\($0)" })
        #expect(
            items.allSatisfy { $0.customId.wholeMatch(of: /[a-zA-Z0-9_-]{1,64}/) != nil && $0.outcome == nil }
        )
        #expect(try Self.states(store) == [.inBatch, .inBatch, .inBatch])
        #expect(
            try store.runs.itemCounts(runID: "r1")
                == ItemCounts(requests: 3, total: 3, done: 0, failed: 0, cached: 0))
        try StoreCountersTests.expectCountersMatch(store, runs: ["r1"], after: "prepare")

        try store.batches.recordSubmitted(
            batchID: batch.id, remoteID: "msgbatch_1", now: now, nextPoll: now + 60)
        let submitted = try #require(try store.batches.batch(id: batch.id))
        #expect(submitted.state == .submitted && submitted.remoteId == "msgbatch_1")
        #expect(try store.batches.batchesToPoll(now: now + 59).isEmpty)
        #expect(try store.batches.batchesToPoll(now: now + 60).map(\.id) == [batch.id])
        try store.batches.reschedulePoll(batchID: batch.id, next: now + 120)
        #expect(try store.batches.batchesToPoll(now: now + 60).isEmpty)
        try store.batches.markEnded(batchID: batch.id, now: now + 120)
        #expect(try store.batches.batchesToPoll(now: now + 120).map(\.state) == [.ended])

        // Results in any order, matched by custom id alone.
        #expect(
            try store.batches.commitBatchCall(
                batchID: batch.id, customID: items[2].customId, Self.succeeded(requests[2], dollars: 0.02),
                run: nil,
                now: now))
        #expect(!(try store.batches.markCollected(batchID: batch.id, now: now)))
        #expect(
            try store.batches.commitBatchCall(
                batchID: batch.id, customID: items[0].customId, Self.succeeded(requests[0], dollars: 0.01),
                run: nil,
                now: now))
        #expect(
            try store.runs.itemCounts(runID: "r1")
                == ItemCounts(requests: 3, total: 3, done: 2, failed: 0, cached: 0))
        #expect(
            try store.batches.commitBatchCall(
                batchID: batch.id, customID: items[1].customId, .refused("bad request"), run: nil, now: now))
        #expect(
            try store.runs.itemCounts(runID: "r1")
                == ItemCounts(requests: 3, total: 3, done: 2, failed: 1, cached: 0))
        try StoreCountersTests.expectCountersMatch(store, runs: ["r1"], after: "results")
        #expect(try store.batches.markCollected(batchID: batch.id, now: now + 130))
        let collected = try #require(try store.batches.batch(id: batch.id))
        #expect(collected.state == .collected && collected.collectedAt != nil)
        #expect(try store.batches.batchesToPoll(now: now + 1000).isEmpty)
        #expect(
            try store.batches.items(batchID: batch.id).map(\.outcome) == [.succeeded, .errored, .succeeded])
        let ledger = try store.values("SELECT id FROM ledger ORDER BY id", as: Int.self)
        #expect(try store.values("SELECT batch_api FROM ledger ORDER BY id", as: Bool.self) == [true, true])
        #expect(try store.ledger.spend(runID: "r1").dollars == 0.02 + 0.01)
        let results = try store.runs.results(runID: "r1")
        #expect(Set(results.keys) == [requests[0].id, requests[2].id])
        #expect(results[requests[2].id]?.ledgerId.map(Int.init) == ledger.first)
        #expect(try store.batches.batches(runID: "r1").map(\.id) == [batch.id])
    }

    @Test func aKillBetweenPrepareAndSubmitLosesNothingAndAbandoningReturnsTheItemsToPending()
        throws
    {
        let workspace = try TemporaryWorkspace()
        let (first, requests) = try Self.store(workspace, count: 3)
        let batch = try first.batches.prepareBatch(
            runID: "r1", provider: "openai", model: "m", requestIDs: [requests[0].id, requests[2].id],
            worstDollars: 1, now: Date())
        // The process dies here: a new one opens the store.
        let store = try StoreTests.store(workspace)
        #expect(try store.batches.preparingBatches().map(\.id) == [batch.id])
        #expect(try Self.states(store) == [.inBatch, .pending, .inBatch])
        try store.batches.abandonPreparing(batchID: batch.id, reason: "never created", now: Date())
        #expect(try Self.states(store) == [.pending, .pending, .pending])
        let failed = try #require(try store.batches.batch(id: batch.id))
        #expect(failed.state == .failed && failed.error == "never created")
        #expect(try store.batches.preparingBatches().isEmpty)
        try StoreCountersTests.expectCountersMatch(store, runs: ["r1"], after: "abandon")
    }

    @Test func collectingTheSameResultsTwiceBooksOneResultAndOneLedgerRow() throws {
        let workspace = try TemporaryWorkspace()
        let (store, requests) = try Self.store(workspace, count: 1)
        let batch = try store.batches.prepareBatch(
            runID: "r1", provider: "anthropic", model: "m", requestIDs: [requests[0].id], worstDollars: 1,
            now: Date())
        let customID = "\(batch.id)_0"
        #expect(
            try store.batches.commitBatchCall(
                batchID: batch.id, customID: customID, Self.succeeded(requests[0], dollars: 0.1), run: nil,
                now: Date())
        )
        #expect(
            !(try store.batches.commitBatchCall(
                batchID: batch.id, customID: customID, Self.succeeded(requests[0], dollars: 0.1), run: nil,
                now: Date()))
        )
        #expect(
            !(try store.batches.commitBatchCall(
                batchID: batch.id, customID: "\(batch.id)_9", .refused("x"), run: nil, now: Date())))
        let rows = (try store.count("ledger"), try store.count("results"))
        #expect(rows == (1, 1))
        #expect(try store.ledger.spend(runID: "r1").dollars == 0.1)
        #expect(try Self.states(store) == [.done])
    }

    @Test func expiredAndCanceledItemsGoAgainAndAnInvalidOneFails() throws {
        let workspace = try TemporaryWorkspace()
        let (store, requests) = try Self.store(workspace, count: 4)
        let batch = try store.batches.prepareBatch(
            runID: "r1", provider: "anthropic", model: "m", requestIDs: requests.map(\.id), worstDollars: 1,
            now: Date())
        let outcomes: [BatchBooking] = [
            .again(.expired, reason: "expired"), .again(.canceled, reason: "canceled"),
            .again(.errored, reason: "overloaded"), .refused("max_tokens: too large"),
        ]
        for (index, outcome) in outcomes.enumerated() {
            #expect(
                try store.batches.commitBatchCall(
                    batchID: batch.id, customID: "\(batch.id)_\(index)", outcome, run: nil, now: Date()))
        }
        let rows = try store.runs.requests(runID: "r1")
        #expect(rows.map(\.state) == [.pending, .pending, .pending, .failed])
        #expect(rows.map(\.error) == ["expired", "canceled", "overloaded", "max_tokens: too large"])
        #expect(
            try store.batches.items(batchID: batch.id).map(\.outcome) == [
                .expired, .canceled, .errored, .errored,
            ])
        #expect(try store.count("ledger") == 0)
        #expect(
            try store.runs.pendingRequests(runID: "r1", limit: 10).map(\.id) == requests.prefix(3).map(\.id))
        #expect(try store.batches.markCollected(batchID: batch.id, now: Date()))
        try StoreCountersTests.expectCountersMatch(store, runs: ["r1"], after: "outcomes")
    }

    @Test func planningReadsSkipRequestsInABatchAndABatchTakesOnlyPendingOrRetryingOnes() throws {
        let workspace = try TemporaryWorkspace()
        let (store, requests) = try Self.store(workspace, count: 4)
        try store.execute("UPDATE requests SET state = 'retrying' WHERE id = ?", [requests[3].id])
        _ = try store.batches.prepareBatch(
            runID: "r1", provider: "anthropic", model: "m", requestIDs: [requests[1].id, requests[3].id],
            worstDollars: 1, now: Date())
        #expect(
            try store.runs.pendingRequests(runID: "r1", limit: 10).map(\.id) == [
                requests[0].id, requests[2].id,
            ])
        #expect(try store.runs.dueRetries(runID: "r1", by: Date() + 3600).isEmpty)
        #expect(throws: OffpeakError.self) {
            try store.batches.prepareBatch(
                runID: "r1", provider: "anthropic", model: "m", requestIDs: [requests[0].id, requests[1].id],
                worstDollars: 1, now: Date())
        }
        // The refused batch left nothing behind.
        #expect(try store.batches.batches(runID: "r1").count == 1)
        #expect(try Self.states(store) == [.pending, .inBatch, .pending, .inBatch])
    }

    @Test func aBatchKeepsTheFirstProviderIDItIsGiven() throws {
        let workspace = try TemporaryWorkspace()
        let (store, requests) = try Self.store(workspace, count: 1)
        let batch = try store.batches.prepareBatch(
            runID: "r1", provider: "openai", model: "m", requestIDs: [requests[0].id], worstDollars: 1,
            now: Date())
        try store.batches.recordSubmitted(
            batchID: batch.id, remoteID: "batch_a", now: Date(), nextPoll: Date())
        try store.batches.recordSubmitted(
            batchID: batch.id, remoteID: "batch_a", now: Date(), nextPoll: Date())
        #expect(throws: OffpeakError.self) {
            try store.batches.recordSubmitted(
                batchID: batch.id, remoteID: "batch_b", now: Date(), nextPoll: Date())
        }
        #expect(try store.batches.batch(id: batch.id)?.remoteId == "batch_a")
    }
}

/// A provider request carrying a batched prompt of several items: booked once, for all of them.
@Suite(.ownThreads) struct StoreBatchedPromptTests {
    @Test func aBatchedPromptsItemsShareACustomIDAndAreBookedTogetherOnce() throws {
        let workspace = try TemporaryWorkspace()
        let (store, requests) = try StoreBatchesTests.store(workspace, count: 5)
        let now = Date()
        let batch = try store.batches.prepareBatch(
            runID: "r1", provider: "sim", model: "m",
            calls: [[requests[0].id, requests[1].id, requests[2].id], [requests[3].id, requests[4].id]],
            worstDollars: 0.4, now: now)
        let stored = try #require(try store.batches.batch(id: batch.id))
        #expect(stored.requests == 2 && stored.items == 5)
        let items = try store.batches.items(batchID: batch.id)
        #expect(items.map(\.customId) == ["0", "0", "0", "1", "1"].map { "\(batch.id)_\($0)" })
        #expect(items.map(\.slot) == [0, 1, 2, 0, 1])
        #expect(try store.batches.openBatchLoad(runID: "r1").dollars == 0.4)

        // The first prompt answered two of its three items; the third goes again.
        var booking = BatchBooking(outcome: .succeeded)
        booking.ledger = StoreCountersTests.ledger(
            run: "r1", items: 3, hit: false, failed: false, dollars: 0.03)
        booking.results = [
            StoreCountersTests.result(requests[0], cached: false),
            StoreCountersTests.result(requests[2], cached: false),
        ]
        booking.againReason = "batched answer: missing"
        let run = try #require(try store.runs.run(id: "r1"))
        #expect(
            try store.batches.commitBatchCall(
                batchID: batch.id, customID: "\(batch.id)_0", booking, run: run, now: now))
        #expect(
            !(try store.batches.commitBatchCall(
                batchID: batch.id, customID: "\(batch.id)_0", booking, run: run, now: now)))
        #expect(try StoreBatchesTests.states(store) == [.done, .pending, .done, .inBatch, .inBatch])
        #expect(try store.runs.requests(runID: "r1").map(\.attempts) == [0, 1, 0, 0, 0])
        #expect(try store.values("SELECT batch_api FROM ledger ORDER BY id", as: Bool.self) == [true])
        #expect(try store.runs.run(id: "r1")?.itemsDone == 2)

        // The second was refused as invalid: both its items fail with the message.
        var refused = BatchBooking(outcome: .errored)
        refused.failReason = "invalid request: max_tokens too large"
        #expect(
            try store.batches.commitBatchCall(
                batchID: batch.id, customID: "\(batch.id)_1", refused, run: run, now: now))
        #expect(try StoreBatchesTests.states(store) == [.done, .pending, .done, .failed, .failed])
        #expect(try store.batches.markCollected(batchID: batch.id, now: now))
        #expect(try store.batches.openBatchLoad(runID: "r1").dollars == 0)
        try StoreCountersTests.expectCountersMatch(store, runs: ["r1"], after: "batched prompts")
    }
}
