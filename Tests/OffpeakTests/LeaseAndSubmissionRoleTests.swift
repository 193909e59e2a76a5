import Foundation
import Testing

@testable import Offpeak

/// `LeaseStore` and `SubmissionStore`, the same scenarios on both engines (`StoreEngine`).
struct LeaseAndSubmissionRoleTests {
    typealias F = RoleFixtures

    @Test(arguments: StoreEngine.allCases)
    func leasesAreTakenRenewedStolenAfterExpiryAndReleased(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1"), requests: [])
        let (a, b) = ("other-host:1", "other-host:2")
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: a, host: "test-host", ttl: 60, now: F.t0) == nil
        )
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: b, host: "test-host", ttl: 60, now: F.t0 + 10)
                == a)
        // The holder renews its own lease.
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: a, host: "test-host", ttl: 60, now: F.t0 + 30)
                == nil)
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: b, host: "test-host", ttl: 60, now: F.t0 + 89)
                == a)
        // Expired: taken over.
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: b, host: "test-host", ttl: 60, now: F.t0 + 90)
                == nil)
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: a, host: "test-host", ttl: 60, now: F.t0 + 91)
                == b)
        // Only the holder's release frees it.
        try roles.leases.releaseLease(runID: "r1", owner: a)
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: a, host: "test-host", ttl: 60, now: F.t0 + 92)
                == b)
        try roles.leases.releaseLease(runID: "r1", owner: b)
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: a, host: "test-host", ttl: 60, now: F.t0 + 93)
                == nil)
    }

    @Test(arguments: StoreEngine.allCases)
    func aLeaseOfAGoneProcessOfThisHostIsTakenAtOnce(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1"), requests: [])
        let host = ProcessOwner.current.split(separator: ":")[0]
        let gone = "\(host):4190000"  // above any pid this machine hands out
        let now = Date()
        #expect(
            try roles.leases.acquireLease(runID: "r1", owner: gone, host: "test-host", ttl: 600, now: now)
                == nil)
        #expect(
            try roles.leases.acquireLease(
                runID: "r1", owner: ProcessOwner.current, host: "test-host", ttl: 600, now: now) == nil
        )
        // A live process of this host keeps it.
        #expect(
            try roles.leases.acquireLease(
                runID: "r1", owner: "\(host):1", host: "test-host", ttl: 600, now: now)
                == ProcessOwner.current)
    }

    @Test(arguments: StoreEngine.allCases)
    func enqueueMakesARunOnceAddsToItAndRefusesItemsItHas(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let none = try roles.submissions.enqueue([], job: "j", newRun: F.run("q1"))
        #expect(none.isEmpty)
        #expect(try roles.runs.run(id: "q1") == nil)
        let first = [F.request("a", run: "x", position: 0), F.request("b", run: "x", position: 0)]
        #expect(try roles.submissions.enqueue(first, job: "j", newRun: F.run("q1")) == [nil, nil])
        let second = [
            F.request("c", run: "x", position: 0), F.request("a", run: "y", position: 0),
            F.request("c", run: "z", position: 0),
        ]
        // The open run is found: `q2` is not made.
        #expect(try roles.submissions.enqueue(second, job: "j", newRun: F.run("q2")) == [nil, "q1", "q1"])
        #expect(try roles.runs.run(id: "q2") == nil)
        let requests = try roles.runs.requests(runID: "q1", states: nil)
        #expect(requests.map(\.itemId) == ["a", "b", "c"])
        #expect(requests.map(\.position) == [0, 1, 2])
        #expect(try roles.runs.run(id: "q1")?.itemsTotal == 3)
        #expect(try roles.runs.itemCounts(runID: "q1") == ItemCounts(requests: 3, total: 3))
        let (found, result) = try #require(try roles.submissions.request(id: "x/b"))
        #expect(found.runId == "q1" && found.itemId == "b" && found.position == 1)
        #expect(result == nil)
        #expect(try roles.submissions.request(id: "nothing") == nil)
        // Known items before new ones: the new ones follow on from the run's last position.
        let third = [
            F.request("b", run: "v", position: 0), F.request("d", run: "x", position: 0),
            F.request("a", run: "w", position: 0), F.request("e", run: "x", position: 0),
        ]
        #expect(
            try roles.submissions.enqueue(third, job: "j", newRun: F.run("q3")) == ["q1", nil, "q1", nil])
        let all = try roles.runs.requests(runID: "q1", states: nil)
        #expect(all.map(\.itemId) == ["a", "b", "c", "d", "e"])
        #expect(all.map(\.position) == [0, 1, 2, 3, 4])
        #expect(try roles.runs.run(id: "q1")?.itemsTotal == 5)
    }

    @Test(arguments: StoreEngine.allCases)
    func aSharedSystemPromptReadsBackWhole(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let requests = (0..<3).map { index in
            var request = F.request("s\(index)", run: "x", position: 0)
            request.payload = F.sharedPayload("question \(index)")
            return request
        }
        _ = try roles.submissions.enqueue(requests, job: "j", newRun: F.run("q1"))
        #expect(try roles.runs.requests(runID: "q1", states: nil).map(\.payload) == requests.map(\.payload))
        #expect(try roles.submissions.request(id: "x/s2")?.0.payload == requests[2].payload)
        #expect(try roles.runs.pendingRequests(runID: "q1", limit: 1).first?.payload == requests[0].payload)
    }

    @Test(arguments: StoreEngine.allCases)
    func requestByIDCarriesItsAnswer(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let run = F.run("r1")
        let requests = F.requests(2, run: "r1")
        try roles.runs.insert(run: run, requests: requests)
        try roles.runs.commitCall(
            run: run, ledger: F.ledger(run: "r1", items: 1), results: [F.result(requests[0])])
        let (request, result) = try #require(try roles.submissions.request(id: requests[0].id))
        #expect(request.state == .done)
        #expect(result?.text == "answer to i0")
        #expect(result?.ledgerId != nil)
    }
}
