import Foundation
import Testing

@testable import Offpeak

/// `RunStore`, the same scenarios on both engines (`StoreEngine`), through the protocol only.
struct RunStoreRoleTests {
    typealias F = RoleFixtures

    /// A run is held by the process that creates it from the moment it exists: a tick elsewhere that
    /// reads it then finds it held (and helps), never unheld (it would run it too, as a resume).
    @Test(arguments: StoreEngine.allCases)
    func aFreshRunIsSavedWithItsCreatorsLease(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let lease = LeaseRecord(
            runId: "r1", owner: "box-a:1", acquiredAt: F.t0, heartbeatAt: F.t0, expiresAt: F.t0 + 600,
            host: "box-a")
        let opened = try roles.runs.openRun(
            job: "j", creating: F.run("r1"), requests: F.requests(2, run: "r1"), lease: lease)
        #expect(opened.created)
        #expect(try roles.leases.liveLeases(now: F.t0 + 1)["r1"]?.owner == "box-a:1")
        // Another process opening the job gets the same run, and its lease is not written.
        var other = lease
        other.runId = "r2"
        other.owner = "box-b:2"
        let again = try roles.runs.openRun(
            job: "j", creating: F.run("r2"), requests: F.requests(2, run: "r2"), lease: other)
        #expect(!again.created && again.run.id == "r1")
        #expect(try roles.leases.liveLeases(now: F.t0 + 1).keys.sorted() == ["r1"])
        #expect(
            try roles.leases.acquireLease(
                runID: "r1", owner: "box-b:2", host: "box-b", ttl: 600, now: F.t0 + 1)
                == "box-a:1")
    }

    @Test(arguments: StoreEngine.allCases)
    func openRunMakesOneRunPerJobAndReadsIt(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let opened = try roles.runs.openRun(
            job: "j", creating: F.run("r1"), requests: F.requests(3, run: "r1"), lease: nil)
        #expect(opened.created && opened.run.id == "r1")
        let again = try roles.runs.openRun(
            job: "j", creating: F.run("r2", at: F.t0 + 5), requests: F.requests(2, run: "r2"), lease: nil)
        #expect(!again.created && again.run == F.run("r1"))
        #expect(try roles.runs.run(id: "r2") == nil)
        #expect(try roles.runs.latestResumableRun(job: "j") == F.run("r1"))
        #expect(try roles.runs.latestResumableRun(job: "other") == nil)
        try roles.runs.insert(run: F.run("r3", job: "k", state: .completed, at: F.t0 + 10), requests: [])
        try roles.runs.insert(run: F.run("r4", job: "k", at: F.t0 + 20), requests: [])
        #expect(try roles.runs.runs(limit: 2).map(\.id) == ["r4", "r3"])
        #expect(try roles.runs.runRows(limit: 10).runs.map(\.id) == ["r4", "r3", "r1"])
        #expect(try roles.runs.resumableRuns().map(\.id) == ["r1", "r4"])
        #expect(try roles.runs.resumableRunRows().unreadable.isEmpty)
        #expect(try roles.runs.readableRun(id: "r3")?.state == .completed)
        var changed = try #require(try roles.runs.run(id: "r4"))
        try changed.move(to: .running, reason: "go", at: F.t0 + 30)
        try roles.runs.update(run: changed)
        #expect(try roles.runs.run(id: "r4") == changed)
        #expect(throws: OffpeakError.self) { try roles.runs.update(run: F.run("missing")) }
        #expect(throws: OffpeakError.self) {
            try roles.runs.insert(
                run: F.run("r5"),
                requests: [
                    F.request("a", run: "r5", position: 0),
                    F.request("a", run: "r5", position: 1),
                ])
        }
        #expect(try roles.runs.run(id: "r5") == nil)
    }

    @Test(arguments: StoreEngine.allCases)
    func mergeAddsDropsRefreshesAndKeepsAnswers(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let run = F.run("r1")
        let old = F.requests(3, run: "r1")
        try roles.runs.insert(run: run, requests: old)
        try roles.runs.commitCall(
            run: run, ledger: F.ledger(run: "r1", items: 1), results: [F.result(old[0])])
        var planned = [
            F.request("i0", run: "r1", position: 0, payload: "new"),
            F.request("i1", run: "r1", position: 1, payload: "changed"),
            F.request("i3", run: "r1", position: 2),
        ]
        planned[1].id = "fresh-id-ignored"
        let dropped = try roles.runs.merge(requests: planned, into: "r1")
        #expect(dropped == ["i2"])
        let now = try roles.runs.requests(runID: "r1", states: nil)
        #expect(now.map(\.itemId) == ["i0", "i1", "i3"])
        #expect(now.map(\.payload) == ["p", "changed", "p"])
        #expect(now[1].id == old[1].id)
        #expect(try roles.runs.run(id: "r1")?.itemsTotal == 3)
        #expect(try roles.runs.itemCounts(runID: "r1") == ItemCounts(requests: 3, total: 3, done: 1))
        #expect(try roles.runs.requests(runID: "r1", states: [.done]).map(\.itemId) == ["i0"])
        #expect(try roles.runs.results(runID: "r1").keys.sorted() == [old[0].id])
    }

    @Test(arguments: StoreEngine.allCases)
    func theBacklogComesInItemOrderAndRetriesWhenDue(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let run = F.run("r1")
        let requests = F.requests(6, run: "r1")
        try roles.runs.insert(run: run, requests: requests)
        #expect(try roles.runs.pendingRequests(runID: "r1", limit: 2).map(\.itemId) == ["i0", "i1"])
        #expect(
            try roles.runs.pendingRequests(runID: "r1", after: 1, limit: 10).map(\.itemId)
                == ["i2", "i3", "i4", "i5"])
        try roles.runs.commitCall(
            run: run, ledger: nil, results: [], retry: [("r1/i0", "again")],
            later: [("r1/i3", "slow", F.t0 + 100), ("r1/i1", "slow", F.t0 + 50)])
        let requeued = try #require(try roles.runs.requests(runID: "r1", states: [.pending]).first)
        #expect(requeued.attempts == 1 && requeued.error == "again")
        #expect(try roles.runs.dueRetries(runID: "r1", by: F.t0 + 60).map(\.itemId) == ["i1"])
        #expect(try roles.runs.dueRetries(runID: "r1", by: F.t0 + 100).map(\.itemId) == ["i1", "i3"])
        #expect(try roles.runs.dueRetries(runID: "r1", by: F.t0 + 100, limit: 1).map(\.itemId) == ["i1"])
        #expect(try roles.runs.retryingRequests().map(\.itemId) == ["i1", "i3"])
        let summary = try roles.runs.summary(runID: "r1", state: .retrying)
        #expect(summary.count == 2 && summary.first?.itemId == "i1" && summary.firstDue == F.t0 + 50)
        #expect(try roles.runs.summary(runID: "r1", state: .failed) == StateSummary())
        #expect(
            try roles.runs.pendingRequests(runID: "r1", limit: 10).map(\.itemId) == ["i0", "i2", "i4", "i5"])
    }

    @Test(arguments: StoreEngine.allCases)
    func aCommitReturnsTheCountsAndSpendItWrote(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let run = F.run("r1")
        let requests = F.requests(5, run: "r1")
        try roles.runs.insert(run: run, requests: requests)
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: "h:1", host: "test-host", ttl: 60, now: Date())
                == nil)
        let first = try roles.runs.commitCall(
            run: run, ledger: F.ledger(run: "r1", items: 2),
            results: [F.result(requests[0]), F.result(requests[1])],
            failed: [("r1/i2", "refused")], segment: 3, lease: RunHold(owner: "h:1", ttl: 60))
        #expect(first.run.itemsDone == 2 && first.run.itemsFailed == 1 && first.run.itemsCached == 0)
        #expect(first.spend.calls == 1 && first.spend.dollars == 0.5 && first.spend.inputTokens == 100)
        let checkpoint = try #require(try roles.runs.checkpoint(runID: "r1"))
        #expect(checkpoint.segment == 3 && checkpoint.done == 2 && checkpoint.lastRequestId == "r1/i1")
        let second = try roles.runs.commitCall(
            run: first.run, ledger: F.ledger(run: "r1", items: 1, dollars: 0.125),
            results: [F.result(requests[3])])
        #expect(second.run.itemsDone == 3)
        #expect(second.spend.calls == 2 && second.spend.dollars == 0.625 && second.spend.naiveDollars == 2)
        #expect(
            try roles.runs.itemCounts(runID: "r1") == ItemCounts(requests: 5, total: 5, done: 3, failed: 1))
        #expect(try roles.runs.run(id: "r1")?.itemsDone == 3)
        // No answer is stored twice: the whole commit is refused, and nothing of it stays.
        #expect(throws: OffpeakError.self) {
            try roles.runs.commitCall(
                run: second.run, ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[0])])
        }
        let after = try roles.runs.commitCall(run: second.run, ledger: nil, results: [])
        #expect(after.run.itemsDone == 3 && after.spend.calls == 2)
        let failed = try #require(try roles.runs.requests(runID: "r1", states: [.failed]).first)
        #expect(failed.error == "refused" && failed.attempts == 1)
    }

    @Test(arguments: StoreEngine.allCases)
    func cacheHitsCommitAsCachedItemsThatCostNothing(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let run = F.run("r1")
        let requests = F.requests(3, run: "r1")
        try roles.runs.insert(run: run, requests: requests)
        try roles.runs.commitCacheHits(
            run: run,
            [
                (F.ledger(run: "r1", items: 1, cacheHit: true), F.result(requests[0], fromCache: true)),
                (F.ledger(run: "r1", items: 1, cacheHit: true), F.result(requests[2], fromCache: true)),
            ],
            lease: RunHold(owner: "h:1", ttl: 60))
        #expect(
            try roles.runs.itemCounts(runID: "r1") == ItemCounts(requests: 3, total: 3, done: 2, cached: 2))
        let saved = try #require(try roles.runs.run(id: "r1"))
        #expect(saved.itemsDone == 2 && saved.itemsCached == 2)
        #expect(try roles.runs.checkpoint(runID: "r1")?.lastRequestId == "r1/i2")
        let results = try roles.runs.results(runID: "r1")
        #expect(Set(results.values.compactMap(\.ledgerId)).count == 2)
        let next = try roles.runs.commitCall(run: saved, ledger: nil, results: [])
        #expect(next.spend.calls == 0 && next.spend.naiveDollars == 2 && next.spend.dollars == 0)
    }

    @Test(arguments: StoreEngine.allCases)
    func outlinesAndAnswersAreReadWholeAndOneAtATime(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let run = F.run("r1")
        let requests = F.requests(4, run: "r1")
        try roles.runs.insert(run: run, requests: requests)
        try roles.runs.commitCall(
            run: run, ledger: F.ledger(run: "r1", items: 2),
            results: [F.result(requests[3]), F.result(requests[1])],
            failed: [("r1/i0", "bad")])
        #expect(
            try roles.runs.outlines(runID: "r1")
                == [
                    RequestOutline(id: "r1/i0", itemId: "i0", state: .failed, error: "bad", source: .spec),
                    RequestOutline(id: "r1/i1", itemId: "i1", state: .done, error: nil, source: .spec),
                    RequestOutline(id: "r1/i2", itemId: "i2", state: .pending, error: nil, source: .spec),
                    RequestOutline(id: "r1/i3", itemId: "i3", state: .done, error: nil, source: .spec),
                ])
        var seen: [String] = []
        try roles.runs.forEachResult(runID: "r1") { seen.append($0.requestId) }
        #expect(seen.sorted() == ["r1/i1", "r1/i3"])
        let summary = try roles.runs.summary(runID: "r1", state: .done)
        #expect(summary.count == 2 && summary.first?.itemId == "i1" && summary.firstDue == nil)
    }

    @Test(arguments: StoreEngine.allCases)
    func cancelDropsWhatIsNotSentAndWaitsForBatches(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1"), requests: F.requests(3, run: "r1"))
        #expect(try !roles.runs.isCanceled(runID: "r1"))
        let canceled = try roles.runs.cancelRun(runID: "r1", now: F.t0 + 5)
        #expect(canceled == Store.Cancellation(dropped: 3, inBatch: 0, state: .canceled))
        #expect(try roles.runs.isCanceled(runID: "r1"))
        #expect(try roles.runs.run(id: "r1")?.finishedAt == F.t0 + 5)
        #expect(try roles.runs.requests(runID: "r1", states: [.canceled]).count == 3)
        #expect(throws: OffpeakError.self) { try roles.runs.cancelRun(runID: "r1", now: F.t0 + 6) }
        #expect(throws: OffpeakError.self) { try roles.runs.cancelRun(runID: "none", now: F.t0 + 6) }
        var requests = F.requests(3, run: "r2")
        requests[1].state = .inBatch
        try roles.runs.insert(run: F.run("r2", job: "k"), requests: requests)
        let waiting = try roles.runs.cancelRun(runID: "r2", now: F.t0 + 7)
        #expect(waiting == Store.Cancellation(dropped: 2, inBatch: 1, state: .waiting))
        #expect(try roles.runs.run(id: "r2")?.reason == Store.cancelReason(inBatch: 1))
    }

    @Test(arguments: StoreEngine.allCases)
    func stepsAreInsertedPromotedAndFailedInOneDecision(engine: StoreEngine) throws {
        let roles = try engine.roles()
        var requests = F.requests(2, run: "r1")
        requests[0].state = .waiting
        try roles.runs.insert(run: F.run("r1"), requests: requests)
        let steps = (0..<2).map { F.request("i0#\($0)", run: "r1", position: 10 + $0, source: .chunk) }
        let added = try roles.runs.advanceSteps(runID: "r1") { seen, results in
            #expect(seen.count == 2 && results.isEmpty)
            return StepChanges(insert: steps, fail: [("r1/i1", "a step failed")])
        }
        #expect(added)
        #expect(try roles.runs.itemCounts(runID: "r1") == ItemCounts(requests: 4, total: 2, failed: 1))
        #expect(try roles.runs.run(id: "r1")?.itemsFailed == 1)
        let promoted = try roles.runs.advanceSteps(runID: "r1") { seen, _ in
            #expect(seen.count == 4)
            return StepChanges(delete: steps.map(\.id), promote: [("r1/i0", "final", "k-final")])
        }
        #expect(promoted)
        let now = try roles.runs.requests(runID: "r1", states: nil)
        #expect(now.map(\.itemId) == ["i0", "i1"])
        #expect(now[0].state == .pending && now[0].payload == "final" && now[0].cacheKey == "k-final")
        #expect(try !roles.runs.advanceSteps(runID: "r1") { _, _ in StepChanges() })
        // A step row is inserted at most once.
        let twice = F.request("i1#0", run: "r1", position: 20, source: .chunk)
        _ = try roles.runs.advanceSteps(runID: "r1") { _, _ in StepChanges(insert: [twice]) }
        #expect(throws: OffpeakError.self) {
            _ = try roles.runs.advanceSteps(runID: "r1") { _, _ in StepChanges(insert: [twice]) }
        }
        #expect(try roles.runs.itemCounts(runID: "r1") == ItemCounts(requests: 3, total: 2, failed: 1))
    }

    @Test(arguments: StoreEngine.allCases)
    func aCommitRenewsTheLeaseItNames(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let run = F.run("r1")
        let requests = F.requests(2, run: "r1")
        try roles.runs.insert(run: run, requests: requests)
        let now = Date()
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: "h:1", host: "test-host", ttl: 1, now: now)
                == nil)
        try roles.runs.commitCall(
            run: run, ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[0])],
            lease: RunHold(owner: "h:1", ttl: 600))
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: "h:2", host: "test-host", ttl: 60, now: now + 5)
                == "h:1")
    }

    @Test(arguments: StoreEngine.allCases)
    func aDateTheStoreCannotHoldIsRefusedBeforeAnythingIsWritten(engine: StoreEngine) throws {
        let roles = try engine.roles()
        var run = F.run("r1")
        run.deadlineAt = Date(timeIntervalSince1970: 300_000_000_000)
        #expect(throws: OffpeakError.self) {
            try roles.runs.insert(run: run, requests: F.requests(2, run: "r1"))
        }
        #expect(try roles.runs.run(id: "r1") == nil)
        var request = F.request("a", run: "r2", position: 0)
        request.nextAttemptAt = Date(timeIntervalSince1970: 300_000_000_000)
        #expect(throws: OffpeakError.self) { try roles.runs.insert(run: F.run("r2"), requests: [request]) }
        #expect(try roles.runs.run(id: "r2") == nil)
    }
}
