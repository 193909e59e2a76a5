import Foundation
import OffpeakTestSupport
import Testing

/// Hosts ticking one store (issue 23, item 2), each its own process with its own workspace folder
/// and `OFFPEAK_HOST`: a schedule slot every host sees due fires on one of them, once.
struct ScheduleAcrossHostsTests {
    static let spec =
        OutputsCommandTests.spec(template: "Tell me about {{item}}.")
        + "schedule: \"0 3 * * *\"\ntimezone: UTC\n"

    /// A host's workspace on `sim`, with the scheduled job `fruit`.
    static func host(on sim: SimProcess) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write("jobs/fruit.yaml", spec)
        return workspace
    }

    @Test(.enabled(if: TestStore.onPostgres, "hosts share only a PostgreSQL store"))
    func threeHostsTickingADueSlotAtOnceRunItOnce() throws {
        // Answers that take 0.4 s keep the run open while the other ticks look.
        let sim = try SimProcess(arguments: ["--latency-ms", "400"])
        let hosts = try (0..<3).map { _ in try Self.host(on: sim) }
        let shared = try hosts[0].storeEnvironment()
        let environment = { (host: Int) in shared.merging(["OFFPEAK_HOST": "host-\(host)"]) { $1 } }
        // First sight registers the schedule; 03:00 UTC is not due yet.
        let first = try hosts[0].offpeak(["tick"], environment: environment(0).mapValues { Optional($0) })
        #expect(first.status == 0, "\(first.stderr)")
        // The slot came while every host was off: due now, on all three.
        try hosts[0].psql("UPDATE schedules SET next_due_at = now() - interval '1 hour' WHERE job = 'fruit'")
        let ticks = try (0..<3).map { host in
            try TickTests.start(["tick"], in: hosts[host], environment: environment(host))
        }
        let results = try ticks.map { try #require($0.wait(timeout: 60)) }
        #expect(results.map(\.stderr) == ["", "", ""])
        let winner = try #require(results.firstIndex { $0.stdout.hasPrefix("fruit [schedule]") })
        let run = try #require(try TickTests.runs(hosts[0]).first?["id"] as? String)
        let owner = "\(Self.machine):\(ticks[winner].pid)"
        for (host, result) in results.enumerated() {
            // The others found the run the winner had opened and held: its to finish.
            let expected =
                host == winner
                ? "fruit [schedule]: job fruit: 4 of 4 items answered (4 now)\n"
                : "fruit [resume]: job fruit: run \(run) is being run by \(owner) on host host-\(winner); "
                    + "this tick leaves it\n"
            #expect(
                result.stdout == expected || result.stdout == "nothing to do\n",
                "host-\(host): \(result.stdout) vs \(expected)")
            #expect(result.status == 0)
        }
        #expect(try TickTests.calls(sim) == 4, "its 4 items asked once")
        let runs = try TickTests.runs(hosts[0])
        #expect(runs.count == 1)
        #expect(runs.first?["state"] as? String == "completed")
        // The next tick anywhere finds the slot fired and the run done.
        let again = try hosts[2].offpeak(["tick"], environment: environment(2).mapValues { Optional($0) })
        #expect(again.status == 0)
        #expect(again.stdout == "nothing to do\n")
        #expect(try TickTests.calls(sim) == 4)
    }

    /// This machine's name, as a lease's owner (`host:pid`) gives it.
    static var machine: String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "localhost" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
