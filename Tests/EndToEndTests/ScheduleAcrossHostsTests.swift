import Foundation
import OffpeakTestSupport
import Testing

/// Hosts ticking one store (issue 23, item 2), each its own process with its own workspace folder
/// and `OFFPEAK_HOST`: a schedule slot every host sees due fires on one of them, once.
@Suite(.ownThreads) struct ScheduleAcrossHostsTests {
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
            // The winner's lease names it, unless the winner was done and gave the lease back
            // before this host read it: then the line says "another process".
            let helpedText =
                "; this host helped: answered \(Self.count(line.items, "item")) in \(Self.count(line.calls, "call"))\n"
            #expect(
                [
                    "fruit [\(line.why)]: job fruit: run \(run) is being run by \(owner) on host host-\(winner)"
                        + helpedText,
                    "fruit [\(line.why)]: job fruit: run \(run) is being run by another process" + helpedText,
                ].contains(result.stdout), "\(result.stdout)")
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

    /// Three hosts tick slot after slot of an every-minute schedule, all at once, on a clock the
    /// test moves (`tick --now`): each of 200 slots runs exactly once, on one host; 29 slots every
    /// host missed run once at the next tick anywhere.
    @Test(.enabled(if: TestStore.onPostgres, "hosts share only a PostgreSQL store"))
    func threeHostsTicking200SlotsRunEachOnce() throws {
        let sim = try SimProcess()
        let hosts = try (0..<3).map { _ in try TemporaryWorkspace() }
        for host in hosts {
            try host.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
            try host.write(
                "jobs/tock.yaml",
                "kind: prompt\ntemplate: \"Say {{item}}.\"\nitems: [tock]\nmax_tokens: 20\n"
                    + "schedule: \"* * * * *\"\ntimezone: UTC\n")
        }
        let shared = try hosts[0].storeEnvironment()
        let environment = { (host: Int) in shared.merging(["OFFPEAK_HOST": "host-\(host)"]) { $1 } }
        // The clock runs hours behind the machine's, a minute a slot, 20 s into each minute.
        let base = (Date().timeIntervalSince1970 / 60).rounded(.down) * 60 - 6 * 3600
        let at = { (minute: Int) in
            Date(timeIntervalSince1970: base + Double(minute * 60) + 20).formatted(.iso8601)
        }
        /// The three hosts' ticks at `minute`, at once: what each printed, and its process id.
        func tickAll(_ minute: Int) throws -> [(stdout: String, pid: Int32)] {
            let ticks = try (0..<3).map { host in
                try TickTests.start(
                    ["tick", "--now", at(minute)], in: hosts[host], environment: environment(host))
            }
            return try ticks.enumerated().map { host, tick in
                let done = try #require(tick.wait(timeout: 60), "host-\(host) at minute \(minute)")
                #expect(done.status == 0 && done.stderr.isEmpty, "host-\(host) at \(minute): \(done.stderr)")
                return (done.stdout, tick.pid)
            }
        }
        /// Checks the ticks of one slot: one host ran the job, the others found nothing to do or
        /// found its run held (and helped it, or left it); returns the host that ran it.
        func oneRan(_ ticks: [(stdout: String, pid: Int32)], at minute: Int) throws -> Int? {
            let ran = ticks.indices.filter { ticks[$0].stdout.hasPrefix("tock [schedule]: ") }
            #expect(ran.count == 1, "minute \(minute): \(ticks.map(\.stdout))")
            guard let winner = ran.first else { return nil }
            let run = try hosts[0].psql(
                "SELECT id FROM runs WHERE job = 'tock' ORDER BY created_at DESC, id LIMIT 1")
            // Its holder as the lease names it, or, once the winner has let go of the run before the
            // helper looked, "another process".
            let holder = "\(Self.machine):\(ticks[winner].pid) on host host-\(winner)"
            let held = { (why: String, text: String) in
                let by = text.contains(" run by another process; ") ? "another process" : holder
                return "tock [\(why)]: job tock: run \(run) is being run by \(by); "
            }
            var helped = 0
            for (host, tick) in ticks.enumerated() where host != winner {
                // A run it listed as held and found ended once it went to resume it.
                let ended =
                    "tock [resume]: job tock: run \(run) is completed (it ended after this tick looked); "
                    + "nothing to resume\n"
                if tick.stdout == "nothing to do\n"
                    || tick.stdout == held("resume", tick.stdout) + "this tick leaves it\n"
                    || tick.stdout == ended
                {
                    continue
                }
                let line = Self.helpLine(tick.stdout, job: "tock")
                helped += line?.items ?? 0
                #expect(
                    tick.stdout
                        == held(line?.why ?? "help", tick.stdout) + "this host helped: answered "
                        + "\(Self.count(line?.items ?? 0, "item")) in \(Self.count(line?.calls ?? 0, "call"))\n",
                    "minute \(minute), host-\(host)")
            }
            #expect(
                ticks[winner].stdout
                    == "tock [schedule]: job tock: 1 of 1 item answered (\(1 - helped) now)\n",
                "minute \(minute)")
            return winner
        }
        let idle = ["nothing to do\n", "nothing to do\n", "nothing to do\n"]
        // First sight registers the schedule: its first slot is the next minute.
        #expect(try tickAll(0).map(\.stdout) == idle)
        var ranBy = [0, 0, 0]
        for minute in 1...200 {
            if let host = try oneRan(try tickAll(minute), at: minute) { ranBy[host] += 1 }
        }
        print("200 slots run by host: \(ranBy)")
        #expect(ranBy.reduce(0, +) == 200)
        // Every host off for 29 slots: the next tick anywhere runs the job once.
        #expect(try oneRan(try tickAll(230), at: 230) != nil)
        #expect(try tickAll(230).map(\.stdout) == idle)
        let runs = try hosts[0].psql(
            "SELECT count(*) || ' ' || count(*) FILTER (WHERE state = 'completed') FROM runs WHERE job = 'tock'"
        )
        #expect(runs == "201 201")
    }

    /// The reason, items and calls of a tick's line for a run it helped (`JobRunner.help`).
    static func helpLine(_ text: String, job: String = "fruit") -> (why: String, items: Int, calls: Int)? {
        guard text.hasPrefix(job + " "),
            let match = text.firstMatch(
                of: /^\S+ \[(resume|help)\]: .* this host helped: answered (\d+) items? in (\d+) calls?\n$/),
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
