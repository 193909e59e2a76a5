import Foundation
import OffpeakTestSupport
import Testing

/// Hosts working one run at once (issue 23, item 2): the host that holds the run's lease plans and
/// finishes it, the others help it by claiming rounds of its requests; every item is asked once,
/// each host answers a share, and the outputs are those of one host's run.
@Suite(.ownThreads) struct HostsShareOneRunTests {
    /// 96 items, one a call: with `in_flight: 2` a round is 32 requests (16 waves of 2), so three
    /// hosts find rounds to claim.
    static let items = 96

    static func spec(items: Int = items) -> String {
        "kind: prompt\ntemplate: \"Tell me about {{item}}.\"\nbatching: off\nmax_tokens: 60\nitems:\n"
            + (0..<items).map { "  - {id: item-\(String(format: "%03d", $0)), item: \"thing \($0)\"}\n" }
            .joined()
    }

    static func host(on sim: SimProcess, items: Int = items) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nlimits:\n  sim: {in_flight: 2}\n")
        try workspace.write("jobs/many.yaml", spec(items: items))
        return workspace
    }

    @Test(.enabled(if: TestStore.onPostgres, "hosts share only a PostgreSQL store"))
    func threeHostsAnswerOneRunTogetherAndNothingTwice() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "150"])
        let hosts = try (0..<3).map { _ in try Self.host(on: sim) }
        let shared = try hosts[0].storeEnvironment()
        let environment = { (host: Int) in shared.merging(["OFFPEAK_HOST": "host-\(host)"]) { $1 } }
        // host-0 opens the run; the others, a moment later, find it held and help.
        let runner = try TickTests.start(["run", "many"], in: hosts[0], environment: environment(0))
        var run: String?
        for _ in 0..<200 where run == nil {
            run = try TickTests.runs(hosts[0]).first?["id"] as? String
            if run == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        let runID = try #require(run)
        let helpers = try (1..<3).map { host in
            try TickTests.start(["tick"], in: hosts[host], environment: environment(host))
        }
        let ran = try #require(runner.wait(timeout: 120))
        let helped = try helpers.map { try #require($0.wait(timeout: 120)) }
        #expect(ran.status == 0, "\(ran.stderr)")
        let owner = "\(ScheduleAcrossHostsTests.machine):\(runner.pid)"
        var answeredByHelpers = 0
        for (index, result) in helped.enumerated() {
            #expect(result.status == 0, "\(result.stderr)")
            let line = try #require(
                result.stdout.firstMatch(of: /this host helped: answered (\d+) items? in (\d+) calls?\n$/),
                "\(result.stdout)")
            let (items, calls) = (Int(line.1) ?? -1, Int(line.2) ?? -1)
            #expect(items == calls, "one item a call")
            answeredByHelpers += items
            #expect(
                result.stdout
                    == "many [help]: job many: run \(runID) is being run by \(owner) on host host-0; this host "
                    + "helped: answered \(ScheduleAcrossHostsTests.count(items, "item")) in "
                    + "\(ScheduleAcrossHostsTests.count(calls, "call"))\n", "host-\(index + 1)")
        }
        // The lease holder's first line counts what it answered itself.
        #expect(
            ran.stdout.split(separator: "\n").first.map(String.init)
                == "job many: \(Self.items) of \(Self.items) items answered (\(Self.items - answeredByHelpers) now)"
        )
        // Every item asked once, and every host asked some.
        #expect(try TickTests.calls(sim) == Self.items)
        let byHost = try hosts[0].psql(
            "SELECT host || ' ' || count(*) FROM ledger WHERE NOT cache_hit GROUP BY host ORDER BY host")
        let counts = byHost.split(separator: "\n").map { $0.split(separator: " ") }
        #expect(counts.map { String($0[0]) } == ["host-0", "host-1", "host-2"], "\(byHost)")
        #expect(counts.compactMap { Int($0[1]) }.reduce(0, +) == Self.items)
        let runs = try TickTests.runs(hosts[0])
        #expect(runs.count == 1 && runs.first?["state"] as? String == "completed")
        #expect(try hosts[0].psql("SELECT count(*) FROM claims") == "0", "every claim released")
        let answers = TickTests.answers(hosts[0], job: "many")
        #expect(answers.count == Self.items)
    }

    /// The ledger counts what the provider billed after kills on three hosts (issue 46, item 7):
    /// twice, while the three hosts have calls in flight on one run (two each), every one of them is killed;
    /// the calls they left are booked as lost when the run is taken over, so the ledger's calls
    /// are the sim's billed calls (more only by a call killed between being written down and
    /// leaving, `LostCalls`), and every item is still answered.
    @Test(.enabled(if: TestStore.onPostgres, "hosts share only a PostgreSQL store"))
    func killsOnThreeHostsLeaveEveryBilledCallInTheLedger() throws {
        let items = 40
        // Calls of 2 s: the kills land while the calls counted in flight are still there, after the
        // random pause and the stats call, however loaded the machine (800 ms once left one of six).
        let sim = try SimProcess(arguments: ["--latency-ms", "2000"])
        let hosts = try (0..<3).map { _ in try Self.host(on: sim, items: items) }
        let shared = try hosts[0].storeEnvironment()
        let environment = { (host: Int) in shared.merging(["OFFPEAK_HOST": "host-\(host)"]) { $1 } }
        var inFlightAtKills = 0
        for round in 0..<2 {
            let runner = try TickTests.start(
                round == 0 ? ["run", "many"] : ["tick"], in: hosts[0], environment: environment(0))
            let opened = Date() + 10
            while try TickTests.runs(hosts[0]).isEmpty, Date() < opened {
                Thread.sleep(forTimeInterval: 0.05)
            }
            let helpers = try (1..<3).map { host in
                try TickTests.start(["tick"], in: hosts[host], environment: environment(host))
            }
            try InFlightStopTests.waitForCallsInFlight(sim, 3)
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.5))
            inFlightAtKills += try sim.stats()["in_flight"] as? Int ?? 0
            for process in [runner] + helpers {
                process.signal(SIGKILL)
                _ = process.wait(timeout: 10)
            }
        }
        let ticks = try TickTests.tickUntilDone(hosts[0], environment: environment(0), limit: 10)
        #expect(ticks.last?.result.status == 0, "\(ticks.last?.result.stderr ?? "")")
        let billed = try #require(try sim.stats()["ok_calls"] as? Int)
        let ledger = try #require(Int(try hosts[0].psql("SELECT count(*) FROM ledger WHERE NOT cache_hit")))
        #expect(
            ledger >= billed && ledger <= billed + 2 * 3 * 2, "the ledger's \(ledger) calls, \(billed) billed"
        )
        let lost = Int(try hosts[0].psql("SELECT count(*) FROM ledger WHERE lost")) ?? 0
        #expect(lost >= 2 && lost <= 2 * 3 * 2, "lost \(lost), at the sim at the kills \(inFlightAtKills)")
        let runs = try TickTests.runs(hosts[0])
        #expect(runs.count == 1 && runs.first?["state"] as? String == "completed")
        // The host that finished the run wrote its outputs: a helper, when the last items were answered
        // in a helper's tick before the kills. `offpeak outputs` writes them on this host either way.
        let outputs = try hosts[0].offpeak(["outputs", "many"], environment: environment(0))
        #expect(outputs.status == 0, "\(outputs.stderr)")
        #expect(TickTests.answers(hosts[0], job: "many").count == items)
        #expect(
            try hosts[0].psql("SELECT count(*) FROM budget_reservations") == "0", "nothing left in flight")
    }
}
