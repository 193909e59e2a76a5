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
        var helped = 0
        for (host, result) in results.enumerated() where host != winner {
            // The others found the run the winner had opened and held, and helped it with what
            // was left to claim (likely nothing: the winner claims its 4 items in one round).
            if result.stdout == "nothing to do\n" { continue }
            let line = try #require(Self.helpLine(result.stdout), "host-\(host): \(result.stdout)")
            helped += line.items
            #expect(
                result.stdout
                    == "fruit [\(line.why)]: job fruit: run \(run) is being run by \(owner) on host "
                    + "host-\(winner); this host helped: answered \(Self.count(line.items, "item")) in "
                    + "\(Self.count(line.calls, "call"))\n")
        }
        #expect(
            results[winner].stdout
                == "fruit [schedule]: job fruit: 4 of 4 items answered (\(4 - helped) now)\n")
        #expect(results.allSatisfy { $0.status == 0 })
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

    /// The reason, items and calls of a tick's line for a run it helped (`JobRunner.help`).
    static func helpLine(_ text: String) -> (why: String, items: Int, calls: Int)? {
        guard
            let match = text.firstMatch(
                of: /^fruit \[(resume|help)\]: .* this host helped: answered (\d+) items? in (\d+) calls?\n$/),
            let items = Int(match.2), let calls = Int(match.3)
        else { return nil }
        return (String(match.1), items, calls)
    }

    /// `n` and the word, plural unless `n` is 1, as offpeak writes counts.
    static func count(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    /// This machine's name, as a lease's owner (`host:pid`) gives it.
    static var machine: String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "localhost" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
