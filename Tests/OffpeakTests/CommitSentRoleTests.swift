import Foundation
import Testing

@testable import Offpeak

/// What a call's commit does besides its answers, on both engines (`StoreEngine`), as PostgreSQL
/// sends it whole (`RunStore.startCommit`): a fitness change made on the record another process
/// changed meanwhile keeps both changes, and an eviction past one statement's page evicts the rest.
struct CommitSentRoleTests {
    typealias F = RoleFixtures

    /// A batched answer that kept `kept` of 8 items, as a commit or `updateBatchFitness` records it.
    static func answer(kept: Int, at time: Date) -> FitnessChange {
        FitnessChange(provider: "sim", model: "m", at: time) {
            $0.record(asked: 8, kept: kept, rejected: [:], structured: false, at: time)
        }
    }

    @Test(arguments: StoreEngine.allCases)
    func aFitnessChangeCommittedWithACallKeepsWhatAnotherProcessLearnedMeanwhile(engine: StoreEngine) throws {
        let first = try engine.roles()
        let second = try first.another()
        let run = F.run("r1")
        let requests = F.requests(3, run: "r1")
        try first.runs.insert(run: run, requests: requests)
        // The first process reads the record as it writes it...
        _ = try first.batches.updateBatchFitness(Self.answer(kept: 8, at: F.t0))
        // ...the second changes it...
        _ = try second.batches.updateBatchFitness(Self.answer(kept: 2, at: F.t0 + 1))
        // ...and the first commits an answer that teaches on top of both.
        let committed = try first.runs.commitCall(
            run: run, ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[0])],
            fitness: Self.answer(kept: 8, at: F.t0 + 2))
        #expect(committed.fitness["m"]?.prompts == 3)
        #expect(committed.fitness["m"]?.itemsKept == 18)
        #expect(try second.batches.batchFitness(provider: "sim", model: "m")?.itemsKept == 18)
        // With nobody else writing, the next commit's change lands on the record as the first left it.
        let next = try first.runs.commitCall(
            run: committed.run, ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[1])],
            fitness: Self.answer(kept: 7, at: F.t0 + 3))
        #expect(next.fitness["m"]?.prompts == 4)
        #expect(next.fitness["m"]?.itemsKept == 25)
        let read = try second.batches.batchFitness(provider: "sim", model: "m")
        let stored = try #require(read)
        #expect(stored.prompts == 4 && stored.itemsAsked == 32 && stored.itemsKept == 25)
        #expect(next.run.itemsDone == 2)
    }

    /// Calls that came back together commit together: each call's rows as if alone, the run's
    /// counts and spend read once, and one model's changes made in order on its record.
    @Test(arguments: StoreEngine.allCases)
    func callsThatCameBackTogetherCommitInOneTransaction(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let run = F.run("r1")
        let requests = F.requests(3, run: "r1")
        try roles.runs.insert(run: run, requests: requests)
        let committed = try roles.runs.commit([
            CallCommit(
                run: run, ledger: F.ledger(run: "r1", items: 1, dollars: 0.5),
                results: [F.result(requests[0])],
                fitness: Self.answer(kept: 8, at: F.t0)),
            CallCommit(
                run: run, ledger: F.ledger(run: "r1", items: 1, dollars: 0.25),
                results: [F.result(requests[1])],
                failed: [(requests[2].id, "refused")], fitness: Self.answer(kept: 6, at: F.t0 + 1)),
        ])
        #expect(committed.run.itemsDone == 2 && committed.run.itemsFailed == 1)
        #expect(committed.spend.calls == 2 && committed.spend.dollars == 0.75)
        #expect(committed.fitness["m"]?.prompts == 2 && committed.fitness["m"]?.itemsKept == 14)
        #expect(
            try roles.runs.results(runID: "r1").keys.sorted() == [requests[0].id, requests[1].id].sorted())
        #expect(try roles.runs.checkpoint(runID: "r1")?.lastRequestId == requests[1].id)
        let error = #expect(throws: OffpeakError.self) {
            try roles.runs.commit([CallCommit]())
        }
        #expect(error?.status == .software)
    }

    @Test(arguments: StoreEngine.allCases)
    func aCommitEvictsEveryEntryPastTheCapEvenPastOnePage(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let old = (0..<100).map { AnswerCacheStoreRoleTests.entry("e\($0)", at: F.t0 + Double($0), size: 10) }
        _ = try AnswerCacheStoreRoleTests.save(roles, old)
        let run = F.run("r1")
        let requests = F.requests(1, run: "r1")
        try roles.runs.insert(run: run, requests: requests)
        // 1,010 bytes against a cap of 205: the 81 least recently used go, more than a page (64).
        let fresh = AnswerCacheStoreRoleTests.entry("new", at: F.t0 + 1_000, size: 10)
        let committed = try roles.runs.commitCall(
            run: run, ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[0])],
            cache: CacheWrite(records: [fresh], accesses: PendingAccesses.Batch(), maxBytes: 205))
        #expect(committed.evicted == 81)
        let kept = try roles.cache.cacheEntries(job: nil, expiredOnly: false, now: F.t0, limit: 200).map(
            \.key)
        #expect(Set(kept) == Set((81..<100).map { "e\($0)" } + ["new"]))
        // Under the cap, a commit evicts nothing.
        let none = try roles.runs.commitCall(
            run: committed.run, ledger: nil, results: [],
            cache: CacheWrite(
                records: [AnswerCacheStoreRoleTests.entry("newer", at: F.t0 + 1_001, size: 5)],
                accesses: PendingAccesses.Batch(), maxBytes: 205))
        #expect(none.evicted == 0)
    }

    /// A process cut off from the store past its lease: another took the run over, and the first
    /// one's commit, when it gets through, is refused whole; the new holder's commits go on.
    @Test(arguments: StoreEngine.allCases)
    func aCommitWhoseLeaseWasTakenOverIsRefusedWhole(engine: StoreEngine) throws {
        let first = try engine.roles()
        let second = try first.another()
        let run = F.run("r1")
        let requests = F.requests(2, run: "r1")
        try first.runs.insert(run: run, requests: requests)
        // Processes of other machines (their liveness cannot be checked here).
        let cutOff = RunHold(owner: "box-a:4711", ttl: 300.0)
        #expect(
            try first.leases.acquireLease(
                runID: "r1", owner: cutOff.owner, host: "box-a", ttl: 300, now: F.t0) == nil)
        #expect(
            try second.leases.acquireLease(
                runID: "r1", owner: "box-b:1", host: "box-b", ttl: 300, now: F.t0 + 301)
                == nil)
        let error = #expect(throws: OffpeakError.self) {
            try first.runs.commitCall(
                run: run, ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[0])],
                lease: cutOff)
        }
        #expect(
            error?.description
                == "run r1 was taken over by box-b:1 after this process's lease on it expired; the answers of "
                + "its last call were not kept")
        #expect(error?.status == .temporaryFailure)
        #expect(try second.runs.results(runID: "r1").isEmpty)
        #expect(try second.ledger.spend(runID: "r1").calls == 0)
        let kept = try second.runs.commitCall(
            run: run, ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[0])],
            lease: RunHold(owner: "box-b:1", ttl: 300))
        #expect(kept.run.itemsDone == 1)
        // The new holder done, its lease ends but still names it: the cut-off process, back later
        // still, is refused the same way. A commit naming no lease is not fenced.
        try second.leases.releaseLease(runID: "r1", owner: "box-b:1")
        #expect(throws: OffpeakError.self) {
            try first.runs.commitCall(
                run: kept.run, ledger: nil, results: [F.result(requests[1])], lease: cutOff)
        }
        let free = try first.runs.commitCall(run: kept.run, ledger: nil, results: [F.result(requests[1])])
        #expect(free.run.itemsDone == 2)
    }
}
