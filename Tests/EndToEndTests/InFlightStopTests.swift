import Foundation
import OffpeakTestSupport
import Testing

/// Stopping the built `offpeak` while it has many calls in flight (issue 11, item 3): SIGTERM lets
/// them finish within the grace and commits them; `kill -9` loses at most the calls in flight.
@Suite(.serialized) struct InFlightStopTests {
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
}
