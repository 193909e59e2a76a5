import Foundation
import OffpeakTestSupport
import Testing

/// Stopping the built `offpeak` while it has many calls in flight (issue 11, item 3): SIGTERM lets
/// them finish within the grace and commits them; `kill -9` loses at most the calls in flight.
@Suite(.ownThreads, .serialized) struct InFlightStopTests {
    /// Waits until the sim has `count` calls in flight at once, or a few seconds have passed.
    static func waitForCallsInFlight(_ sim: SimProcess, _ count: Int) throws {
        let deadline = Date() + 10
        while Date() < deadline {
            if (try sim.stats()["in_flight"] as? Int ?? 0) >= count { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    @Test func sigtermLetsTheCallsInFlightFinishAndCommitsThem() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "1500"])
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 30)
        let process = try TickTests.start(["run", "docs", "--grace", "20"], in: workspace)
        try Self.waitForCallsInFlight(sim, 2)
        process.signal(SIGTERM)
        let finished = try #require(process.wait(timeout: 30))
        #expect(finished.status == 75, "\(finished.stdout) \(finished.stderr)")
        let run = try #require(try TickTests.runs(workspace).first)
        #expect(run["state"] as? String == "interrupted")
        let done = try #require(run["items_done"] as? Int)
        #expect(done >= 2 && done < 30, "the calls in flight at the signal were answered and kept")
        #expect(done == (try TickTests.calls(sim)), "every call the provider answered was committed")
        #expect(try sim.stats()["in_flight"] as? Int == 0)
    }

    /// `kill -9` at random moments with calls in flight: the ticks after finish the run with every
    /// answer an uninterrupted run's, and the provider billed at most the calls in flight per kill.
    @Test func kill9WithCallsInFlightLosesAtMostThem() throws {
        let documents = 40
        let inFlight = 8
        let referenceSim = try SimProcess(arguments: ["--latency-ms", "100"])
        let reference = try TemporaryWorkspace.docs(on: referenceSim, documents: documents)
        #expect(try reference.offpeak(["run", "docs"]).status == 0)
        let expected = TickTests.answers(reference, job: "docs")

        let sim = try SimProcess(arguments: ["--latency-ms", "100"])
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: documents)
        let kills = 3
        let delays = try TickTests.killAtRandom(workspace, job: "docs", kills: kills, after: 0.3...0.9)
        let ticks = try TickTests.tickUntilDone(workspace, limit: 10)
        #expect(ticks.last?.result.status == 0, "kills after \(delays) s")
        #expect(TickTests.answers(workspace, job: "docs") == expected, "kills after \(delays) s")
        let calls = try TickTests.calls(sim)
        #expect(calls >= documents)
        #expect(calls <= documents + kills * inFlight, "at most the calls in flight are lost per kill")
        let runs = try TickTests.runs(workspace)
        #expect(runs.count == 1 && runs.first?["items_done"] as? Int == documents)
    }

    /// The ledger counts what the provider billed (issue 46, item 7): `kill -9` with calls in
    /// flight, each kill once the sim holds calls, and the ticks after book the calls the killed
    /// process left in flight as lost, at their estimated price, so the ledger's calls are the sim's
    /// billed calls: never fewer, and more only by a call written down and killed before it left
    /// (`LostCalls`), which with calls of two seconds almost never happens.
    @Test func kill9LeavesEveryBilledCallInTheLedger() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "2000"])
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 24)
        var lostAtKills = 0
        for kill in 1...3 {
            let process = try TickTests.start(kill == 1 ? ["run", "docs"] : ["tick"], in: workspace)
            try Self.waitForCallsInFlight(sim, 2)
            Thread.sleep(forTimeInterval: Double.random(in: 0...1.5))
            lostAtKills += try sim.stats()["in_flight"] as? Int ?? 0
            process.signal(SIGKILL)
            _ = process.wait(timeout: 10)
        }
        let ticks = try TickTests.tickUntilDone(workspace, limit: 10)
        #expect(ticks.last?.result.status == 0)
        let billed = try #require(try sim.stats()["ok_calls"] as? Int)
        let costs = try TickTests.json(try workspace.offpeak(["costs", "--json"]).stdout)
        let total = try #require(costs["total"] as? [String: Any])
        let booked = try #require(total["calls"] as? Int)
        let inFlight = 8  // the sim's default limit, which the docs workspace leaves as it is
        #expect(
            booked >= billed && booked <= billed + 3 * inFlight,
            "the ledger's \(booked) calls, \(billed) billed")
        let lost = try #require(costs["lost"] as? [String: Any], "\(costs)")
        let lostCalls = try #require(lost["calls"] as? Int)
        #expect(
            lostCalls >= 3 && lostCalls <= 3 * inFlight,
            "at least one call lost a kill (\(lostAtKills) were at the sim), at most those in flight")
        let dollars = try #require(lost["dollars"] as? Double)
        #expect(dollars > 0)
        let text = try workspace.offpeak(["costs"]).stdout
        let line = text.split(separator: "\n").first { $0.hasPrefix("lost in flight:") }
        #expect(
            line.map(String.init)
                == "lost in flight: \(lostCalls) calls, $\(String(format: "%.4f", dollars)) of the cost above, "
                + "estimated (their process died before their answers were kept)")
    }
}
