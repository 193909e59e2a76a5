import Foundation
import Testing

@testable import Offpeak

/// `BatchStore`, the same scenarios on both engines (`StoreEngine`), through the role protocols only.
struct BatchStoreRoleTests {
    typealias F = RoleFixtures

    /// Run `r1` with `count` pending requests; its requests.
    static func run(_ roles: StoreRoles, count: Int) throws -> (RunRecord, [RequestRecord]) {
        let requests = F.requests(count, run: "r1")
        try roles.runs.insert(run: F.run("r1"), requests: requests)
        return (F.run("r1"), requests)
    }

    static func answered(_ request: RequestRecord, dollars: Double) -> BatchBooking {
        .answered(
            ledger: F.ledger(run: request.runId, items: 1, dollars: dollars), results: [F.result(request)])
    }

    static func states(_ roles: StoreRoles, run: String = "r1") throws -> [RequestRecord.State] {
        try roles.runs.requests(runID: run).map(\.state)
    }

    /// The run's spend as the ledger holds it (a commit with nothing in it reads it).
    static func spend(_ roles: StoreRoles, run: RunRecord) throws -> Spend {
        try roles.runs.commitCall(run: run, ledger: nil, results: []).spend
    }

    @Test(arguments: StoreEngine.allCases)
    func aBatchGoesFromPreparedThroughItsPollsToCollected(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let (run, requests) = try Self.run(roles, count: 3)
        let t0 = F.t0
        let batch = try roles.batches.prepareBatch(
            runID: "r1", provider: "anthropic", model: "m", requestIDs: requests.map(\.id), worstDollars: 0.5,
            now: t0)
        #expect(batch.id.wholeMatch(of: /ob[0-9a-f]{12}/) != nil)
        #expect(try roles.batches.batch(id: batch.id) == batch)
        #expect(batch.state == .preparing && batch.requests == 3 && batch.items == 3)
        #expect(try roles.batches.preparingBatches().map(\.id) == [batch.id])
        #expect(
            try roles.batches.items(batchID: batch.id).map(\.customId) == (0..<3).map { "\(batch.id)_\($0)" })
        #expect(try Self.states(roles) == [.inBatch, .inBatch, .inBatch])
        #expect(try roles.batches.requestsInBatch(runID: "r1") == 3)
        #expect(try roles.runs.itemCounts(runID: "r1") == ItemCounts(requests: 3, total: 3))
        #expect(try roles.batches.hasOpenBatches(runID: "r1"))
        // Not given a provider id yet: a pass must reconcile it, not wait for a poll.
        #expect(try roles.batches.nextBatchPollOnly(runID: "r1", now: t0) == nil)

        try roles.batches.recordSubmitted(
            batchID: batch.id, remoteID: "msgbatch_1", now: t0, nextPoll: t0 + 60)
        try roles.batches.recordSubmitted(
            batchID: batch.id, remoteID: "msgbatch_1", now: t0 + 1, nextPoll: t0)
        #expect(throws: OffpeakError.self) {
            try roles.batches.recordSubmitted(
                batchID: batch.id, remoteID: "msgbatch_2", now: t0, nextPoll: t0)
        }
        #expect(throws: OffpeakError.self) {
            try roles.batches.recordSubmitted(batchID: "ob000000000000", remoteID: "x", now: t0, nextPoll: t0)
        }
        var submitted = try #require(try roles.batches.batch(id: batch.id))
        #expect(submitted.state == .submitted && submitted.remoteId == "msgbatch_1")
        #expect(submitted.submittedAt == t0 && submitted.nextPollAt == t0 + 60)
        #expect(try roles.batches.preparingBatches().isEmpty)
        #expect(try roles.batches.knownRemoteIDs() == ["msgbatch_1"])
        #expect(try roles.batches.batchesToPoll(now: t0 + 59).isEmpty)
        #expect(try roles.batches.batchesToPoll(now: t0 + 60).map(\.id) == [batch.id])
        #expect(try roles.batches.nextBatchPollOnly(runID: "r1", now: t0) == t0 + 60)
        #expect(try roles.batches.nextBatchPollOnly(runID: "r1", now: t0 + 60) == nil)

        let counts = RemoteBatch.Counts(processing: 2, succeeded: 1)
        try roles.batches.recordPoll(
            batchID: batch.id, status: "in_progress", counts: counts, expiresAt: t0 + 86_400, next: t0 + 120)
        try roles.batches.recordPoll(
            batchID: batch.id, status: "in_progress", counts: counts, expiresAt: nil, next: t0 + 180)
        #expect(throws: OffpeakError.self) {
            try roles.batches.recordPoll(
                batchID: "ob000000000000", status: "x", counts: counts, expiresAt: nil, next: t0)
        }
        submitted = try #require(try roles.batches.batch(id: batch.id))
        #expect(submitted.polls == 2 && submitted.remoteStatus == "in_progress" && submitted.counts == counts)
        #expect(submitted.expiresAt == t0 + 86_400 && submitted.nextPollAt == t0 + 180)

        try roles.batches.recordPollFailure(batchID: batch.id, reason: "HTTP 404", next: t0 + 200)
        try roles.batches.recordPollFailure(batchID: batch.id, reason: "HTTP 410", next: t0 + 240)
        submitted = try #require(try roles.batches.batch(id: batch.id))
        #expect(
            submitted.pollFailures == 2 && submitted.pollError == "HTTP 410"
                && submitted.nextPollAt == t0 + 240)
        try roles.batches.clearPollFailures(batchID: batch.id)
        submitted = try #require(try roles.batches.batch(id: batch.id))
        #expect(submitted.pollFailures == 0 && submitted.pollError == nil)
        try roles.batches.reschedulePoll(batchID: batch.id, next: t0 + 300)
        #expect(try roles.batches.batchesToPoll(now: t0 + 299).isEmpty)

        try roles.batches.markEnded(batchID: batch.id, now: t0 + 310)
        try roles.batches.markEnded(batchID: batch.id, now: t0 + 320)
        let ended = try #require(try roles.batches.batchesToPoll(now: t0 + 310).first)
        #expect(ended.state == .ended && ended.endedAt == t0 + 310 && ended.nextPollAt == t0 + 310)
        let calls = try roles.batches.batchCalls(batchID: batch.id)
        #expect(calls.map(\.customID) == (0..<3).map { "\(batch.id)_\($0)" })
        #expect(calls.map { $0.requests.map(\.id) } == requests.map { [$0.id] })
        #expect(calls.first?.requests.first == requests[0].with(state: .inBatch, at: t0))

        // Results in any order, matched by custom id alone; each booked once.
        #expect(
            try roles.batches.commitBatchCall(
                batchID: batch.id, customID: "\(batch.id)_2", Self.answered(requests[2], dollars: 0.02),
                run: run,
                now: t0 + 330))
        #expect(try !roles.batches.markCollected(batchID: batch.id, now: t0 + 330))
        #expect(
            try roles.batches.commitBatchCall(
                batchID: batch.id, customID: "\(batch.id)_0", Self.answered(requests[0], dollars: 0.01),
                run: run,
                now: t0 + 330))
        #expect(
            try roles.batches.commitBatchCall(
                batchID: batch.id, customID: "\(batch.id)_1", .refused("bad request"), run: run, now: t0 + 330
            ))
        #expect(
            try !roles.batches.commitBatchCall(
                batchID: batch.id, customID: "\(batch.id)_0", Self.answered(requests[0], dollars: 0.01),
                run: run,
                now: t0 + 330))
        #expect(
            try roles.runs.itemCounts(runID: "r1") == ItemCounts(requests: 3, total: 3, done: 2, failed: 1))
        let saved = try #require(try roles.runs.run(id: "r1"))
        #expect(saved.itemsDone == 2 && saved.itemsFailed == 1)
        #expect(try roles.runs.checkpoint(runID: "r1")?.lastRequestId == requests[1].id)
        #expect(try roles.runs.requests(runID: "r1").map(\.error) == [nil, "bad request", nil])
        let spend = try Self.spend(roles, run: saved)
        #expect(spend.calls == 2 && abs(spend.dollars - 0.03) < 1e-12)
        let results = try roles.runs.results(runID: "r1")
        #expect(Set(results.keys) == [requests[0].id, requests[2].id])
        #expect(Set(results.values.compactMap(\.ledgerId)).count == 2)

        #expect(try roles.batches.markCollected(batchID: batch.id, now: t0 + 340))
        #expect(try !roles.batches.markCollected(batchID: batch.id, now: t0 + 350))
        let collected = try #require(try roles.batches.batch(id: batch.id))
        #expect(
            collected.state == .collected && collected.collectedAt == t0 + 340 && collected.nextPollAt == nil)
        #expect(
            try roles.batches.items(batchID: batch.id).map(\.outcome) == [.succeeded, .errored, .succeeded])
        #expect(try roles.batches.batchesToPoll(now: t0 + 10_000).isEmpty)
        #expect(try !roles.batches.hasOpenBatches(runID: "r1"))
        #expect(try roles.batches.openBatchLoad(runID: "r1") == Spend())
        #expect(try roles.batches.requestsInBatch(runID: "r1") == 0)
        #expect(try roles.batches.nextBatchPollOnly(runID: "r1", now: t0) == nil)
        #expect(try roles.batches.batches(runID: "r1").map(\.id) == [batch.id])
    }

    @Test(arguments: StoreEngine.allCases)
    func aBatchedPromptsItemsAreBookedTogetherOnceWithTheRunsLeaseRenewed(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let (run, requests) = try Self.run(roles, count: 5)
        let ids = requests.map(\.id)
        let batch = try roles.batches.prepareBatch(
            runID: "r1", provider: "sim", model: "m", calls: [[ids[0], ids[1], ids[2]], [ids[3], ids[4]]],
            audits: [],
            worstDollars: 0.4, worstTokens: (100, 50), host: "box-a", now: F.t0)
        #expect(batch.requests == 2 && batch.items == 5 && batch.host == "box-a")
        let items = try roles.batches.items(batchID: batch.id)
        #expect(items.map(\.customId) == ["0", "0", "0", "1", "1"].map { "\(batch.id)_\($0)" })
        #expect(items.map(\.slot) == [0, 1, 2, 0, 1])
        #expect(items.map(\.requestId) == ids)
        var load = Spend()
        (load.calls, load.inputTokens, load.outputTokens, load.dollars) = (2, 100, 50, 0.4)
        #expect(try roles.batches.openBatchLoad(runID: "r1") == load)
        #expect(
            try roles.batches.batchCalls(batchID: batch.id).map { $0.requests.map(\.id) } == [
                Array(ids[0...2]), Array(ids[3...4]),
            ])

        let now = Date()
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: "h:1", host: "test-host", ttl: 1, now: now)
                == nil)
        // The first prompt answered two of its three items (the third goes again); the second was
        // refused as invalid; the first is given twice and booked once.
        var first = BatchBooking(outcome: .succeeded)
        first.ledger = F.ledger(run: "r1", items: 3, dollars: 0.03)
        first.results = [F.result(requests[0]), F.result(requests[2])]
        first.againReason = "batched answer: missing"
        let refused = BatchBooking.refused("invalid request: max_tokens too large")
        let booked = try roles.batches.commitBatchCalls(
            batchID: batch.id,
            [("\(batch.id)_0", first), ("\(batch.id)_1", refused), ("\(batch.id)_0", first)],
            run: run, lease: RunHold(owner: "h:1", ttl: 600), now: F.t0 + 10)
        #expect(booked == ["\(batch.id)_0", "\(batch.id)_1"])
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: "h:2", host: "test-host", ttl: 60, now: now + 5)
                == "h:1")
        let rows = try roles.runs.requests(runID: "r1")
        #expect(rows.map(\.state) == [.done, .pending, .done, .failed, .failed])
        #expect(rows.map(\.attempts) == [0, 1, 0, 1, 1])
        #expect(
            rows.map(\.error) == [nil, "batched answer: missing", nil]
                + Array(repeating: refused.failReason, count: 2))
        #expect(rows[1].updatedAt == F.t0 + 10)
        #expect(try roles.runs.run(id: "r1")?.itemsDone == 2)
        #expect(try roles.runs.checkpoint(runID: "r1")?.lastRequestId == ids[2])
        let results = try roles.runs.results(runID: "r1")
        #expect(Set(results.values.compactMap(\.ledgerId)).count == 1)
        #expect(try Self.spend(roles, run: run).calls == 1)

        // The same results again book nothing.
        #expect(
            try roles.batches.commitBatchCalls(
                batchID: batch.id, [("\(batch.id)_0", first), ("\(batch.id)_1", refused)], run: run,
                lease: nil, now: F.t0 + 20
            ).isEmpty)
        #expect(try Self.spend(roles, run: run).calls == 1)
        #expect(try roles.batches.markCollected(batchID: batch.id, now: F.t0 + 30))
        #expect(try roles.batches.openBatchLoad(runID: "r1") == Spend())
    }

    @Test(arguments: StoreEngine.allCases)
    func itemsNotAnsweredGoAgainOrAreCanceledWithTheirRun(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let (_, requests) = try Self.run(roles, count: 5)
        let batch = try roles.batches.prepareBatch(
            runID: "r1", provider: "anthropic", model: "m", requestIDs: requests.map(\.id), worstDollars: 1,
            now: F.t0)
        let outcomes: [BatchBooking] = [
            .again(.expired, reason: "expired"), .again(.canceled, reason: "canceled"),
            .again(.errored, reason: "overloaded"), .refused("max_tokens: too large"),
        ]
        for (index, outcome) in outcomes.enumerated() {
            #expect(
                try roles.batches.commitBatchCall(
                    batchID: batch.id, customID: "\(batch.id)_\(index)", outcome, run: nil, now: F.t0 + 1))
        }
        #expect(
            try !roles.batches.commitBatchCall(
                batchID: batch.id, customID: "\(batch.id)_9", .refused("x"), run: nil, now: F.t0 + 1))
        // An answer naming no request is the lone item's.
        var result = F.result(requests[4])
        result.requestId = ""
        #expect(
            try roles.batches.commitBatchCall(
                batchID: batch.id, customID: "\(batch.id)_4", .answered(ledger: nil, results: [result]),
                run: nil,
                now: F.t0 + 1))
        let rows = try roles.runs.requests(runID: "r1")
        #expect(rows.map(\.state) == [.pending, .pending, .pending, .failed, .done])
        #expect(rows.map(\.error) == ["expired", "canceled", "overloaded", "max_tokens: too large", nil])
        #expect(try roles.runs.results(runID: "r1")[requests[4].id]?.ledgerId == nil)
        #expect(
            try roles.batches.items(batchID: batch.id).map(\.outcome) == [
                .expired, .canceled, .errored, .errored, .succeeded,
            ])
        #expect(
            try roles.runs.pendingRequests(runID: "r1", limit: 10).map(\.id) == requests.prefix(3).map(\.id))
        #expect(try roles.batches.markCollected(batchID: batch.id, now: F.t0 + 2))

        // A run canceled while its items are out: those not answered end canceled, not pending.
        try roles.runs.insert(run: F.run("r2", job: "k"), requests: F.requests(2, run: "r2"))
        let out = try roles.batches.prepareBatch(
            runID: "r2", provider: "anthropic", model: "m", requestIDs: ["r2/i0", "r2/i1"], worstDollars: 1,
            now: F.t0)
        #expect(try roles.runs.cancelRun(runID: "r2", now: F.t0 + 3).inBatch == 2)
        #expect(
            try roles.batches.commitBatchCall(
                batchID: out.id, customID: "\(out.id)_0", .again(.canceled, reason: "canceled"), run: nil,
                now: F.t0 + 4))
        #expect(try Self.states(roles, run: "r2") == [.canceled, .inBatch])
    }
}

extension RequestRecord {
    /// The request as a batch leaves it: in `state`, updated at `at`.
    fileprivate func with(state: RequestRecord.State, at time: Date) -> RequestRecord {
        var request = self
        request.state = state
        request.updatedAt = time
        return request
    }
}
