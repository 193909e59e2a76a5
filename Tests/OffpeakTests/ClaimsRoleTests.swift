import Foundation
import Testing

@testable import Offpeak

/// Claims on rounds of a run's requests (`LeaseStore.claimRound`) and the commits they fence, the
/// same scenarios on both engines: several processes, on several hosts, work one run at once and no
/// request is answered twice.
struct ClaimsRoleTests {
    typealias F = RoleFixtures

    static func positions(_ round: [RequestRecord]) -> [Int] { round.map(\.position) }

    @Test(arguments: StoreEngine.allCases)
    func ownersClaimDisjointRoundsAndTakeOverExpiredOnes(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1"), requests: F.requests(10, run: "r1"))
        let leases = roles.leases
        let a = try leases.claimRound(runID: "r1", owner: "a:1", host: "a", limit: 4, ttl: 600, now: F.t0)
        let b = try leases.claimRound(runID: "r1", owner: "b:1", host: "b", limit: 4, ttl: 10, now: F.t0)
        #expect(Self.positions(a) == [0, 1, 2, 3])
        #expect(Self.positions(b) == [4, 5, 6, 7])
        // An owner's next round replaces its last: what it left due is in it again.
        let again = try leases.claimRound(runID: "r1", owner: "a:1", host: "a", limit: 4, ttl: 600, now: F.t0)
        #expect(Self.positions(again) == [0, 1, 2, 3])
        let c = try leases.claimRound(runID: "r1", owner: "c:1", host: "c", limit: 10, ttl: 600, now: F.t0)
        #expect(Self.positions(c) == [8, 9])
        #expect(
            try leases.otherClaims(runID: "r1", owner: "a:1", now: F.t0)
                == [
                    ClaimRecord(
                        runId: "r1", owner: "b:1", host: "b", firstPosition: 4, lastPosition: 7,
                        expiresAt: F.t0 + 10),
                    ClaimRecord(
                        runId: "r1", owner: "c:1", host: "c", firstPosition: 8, lastPosition: 9,
                        expiresAt: F.t0 + 600),
                ])
        // b's claim expired (its host was cut off): its round is anyone's, here c's.
        let taken = try leases.claimRound(
            runID: "r1", owner: "c:1", host: "c", limit: 10, ttl: 600, now: F.t0 + 11)
        #expect(Self.positions(taken) == [4, 5, 6, 7, 8, 9])
        #expect(try leases.otherClaims(runID: "r1", owner: "a:1", now: F.t0 + 11).map(\.owner) == ["c:1"])
        // A released claim is gone at once.
        try leases.releaseClaim(runID: "r1", owner: "a:1")
        let d = try leases.claimRound(
            runID: "r1", owner: "d:1", host: "d", limit: 10, ttl: 600, now: F.t0 + 11)
        #expect(Self.positions(d) == [0, 1, 2, 3])
        // Nothing due left to an owner: its claim is dropped.
        #expect(
            try leases.claimRound(runID: "r1", owner: "e:1", host: "e", limit: 10, ttl: 600, now: F.t0 + 11)
                .isEmpty)
        #expect(
            try leases.otherClaims(runID: "r1", owner: "x", now: F.t0 + 11).map(\.owner) == ["d:1", "c:1"])
    }

    @Test(arguments: StoreEngine.allCases)
    func retriesAreClaimedWhenDueAndAnsweredRequestsNever(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let requests = F.requests(4, run: "r1")
        try roles.runs.insert(run: F.run("r1"), requests: requests)
        try roles.runs.commitCall(
            run: F.run("r1"), ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[0])],
            later: [(requests[1].id, "HTTP 529", F.t0 + 100)])
        let early = try roles.leases.claimRound(
            runID: "r1", owner: "a:1", host: "a", limit: 10, ttl: 60, now: F.t0)
        #expect(Self.positions(early) == [2, 3])
        let late = try roles.leases.claimRound(
            runID: "r1", owner: "a:1", host: "a", limit: 10, ttl: 60, now: F.t0 + 100)
        #expect(Self.positions(late) == [1, 2, 3])
    }

    @Test(arguments: StoreEngine.allCases)
    func aCommitOfRequestsNoLongerDueIsRefusedWhole(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let requests = F.requests(3, run: "r1")
        var run = F.run("r1", state: .running)
        try roles.runs.insert(run: run, requests: requests)
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: "a:1", host: "a", ttl: 60, now: Date()) == nil)
        // A helper answers request 0; its stale copy of the run changes nothing but the counts.
        run.reason = "a helper's stale copy"
        let helper = RunHold(owner: "b:1", ttl: 60, leased: false)
        let helped = try roles.runs.commitCall(
            run: run, ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[0])], lease: helper)
        #expect(helped.run.itemsDone == 1 && helped.spend.calls == 1)
        let stored = try #require(try roles.runs.run(id: "r1"))
        #expect(stored.itemsDone == 1 && stored.reason == nil && stored.state == .running)
        // The lease holder, whose claim on request 0 had expired, comes back with a failure for it
        // and with an answer: both refused whole, nothing of either kept.
        let holder = RunHold(owner: "a:1", ttl: 60)
        for attempt in [
            CallCommit(
                run: stored, ledger: F.ledger(run: "r1", items: 2), results: [F.result(requests[1])],
                failed: [(requests[0].id, "HTTP 500")], lease: holder),
            CallCommit(
                run: stored, ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[0])],
                lease: RunHold(owner: "b:1", ttl: 60, leased: false)),
        ] {
            let error = #expect(throws: OffpeakError.self) { try roles.runs.commit(attempt) }
            #expect(error?.status == .temporaryFailure)
            #expect(error?.message == ClaimLost.error(runID: "r1").message)
        }
        #expect(throws: OffpeakError.self) {
            try roles.runs.commitCacheHits(
                run: stored,
                [(F.ledger(run: "r1", items: 1, cacheHit: true), F.result(requests[0], fromCache: true))],
                lease: holder)
        }
        #expect(try roles.runs.itemCounts(runID: "r1") == ItemCounts(requests: 3, total: 3, done: 1))
        #expect(try roles.ledger.spend(runID: "r1").calls == 1)
        #expect(try roles.runs.requests(runID: "r1", states: [.pending]).map(\.itemId) == ["i1", "i2"])
    }
}
