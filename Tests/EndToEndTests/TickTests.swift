import Foundation
import OffpeakTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `offpeak tick`, signals and `kill -9` through the built binaries against `offpeak-sim` (DESIGN.md,
/// "How long work survives being stopped"; issues 5 and 6). Serialized: the tests time processes
/// and count the sim's calls, and running them side by side would only blur both.
@Suite(.ownThreads, .serialized) struct TickTests {
    // MARK: - Workspaces and commands

    /// Starts `offpeak` without waiting for it.
    static func start(
        _ arguments: [String], in workspace: TemporaryWorkspace, environment: [String: String] = [:]
    ) throws -> Spawned {
        try Spawned(
            BuiltBinaries.offpeak, arguments + ["--workspace", workspace.root.path],
            environment: environment.merging(try workspace.storeEnvironment()) { mine, _ in mine })
    }

    /// A workspace on `sim` with the queue job `inbox`, fed from `spool/inbox/`.
    static func queueWorkspace(_ sim: SimProcess) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write(
            "jobs/inbox.yaml",
            """
            kind: prompt
            queue: true
            system: Answer in one sentence.
            template: "{{item}}"
            max_tokens: 60
            batching: off
            """)
        return workspace
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    static func runs(_ workspace: TemporaryWorkspace) throws -> [[String: Any]] {
        let status = try workspace.offpeak(["status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        return try #require(try json(status.stdout)["runs"] as? [[String: Any]])
    }

    static func calls(_ sim: SimProcess) throws -> Int {
        try #require(try sim.stats()["calls"] as? Int)
    }

    /// Every answer file under `out/<job>/` (the index aside), by name.
    static func answers(_ workspace: TemporaryWorkspace, job: String) -> [String: String] {
        workspace.snapshot("out/\(job)").filter { $0.key != "index.json" }
    }

    /// The items `out/<job>/index.json` lists, each with its state.
    static func index(_ workspace: TemporaryWorkspace, job: String) throws -> [String: String] {
        let text = try #require(workspace.read("out/\(job)/index.json"))
        let items = try #require(try json(text)["items"] as? [[String: Any]])
        var states: [String: String] = [:]
        for item in items {
            let id = try #require(item["id"] as? String)
            #expect(states[id] == nil, "item \(id) listed twice")
            states[id] = item["state"] as? String
        }
        return states
    }

    /// Starts `offpeak run JOB` (then, once a run exists, `offpeak tick`, which resumes it) `kills`
    /// times, each killed with SIGKILL after a random moment in `after`; runs the job once more
    /// if no kill left a run behind. Returns the moments, for failure messages.
    static func killAtRandom(
        _ workspace: TemporaryWorkspace, job: String, kills: Int, after: ClosedRange<Double>
    ) throws -> [Double] {
        var delays: [Double] = []
        for _ in 1...kills {
            let command = try runs(workspace).isEmpty ? ["run", job] : ["tick"]
            let process = try start(command, in: workspace)
            let delay = Double.random(in: after)
            delays.append(delay)
            Thread.sleep(forTimeInterval: delay)
            process.signal(SIGKILL)
            _ = process.wait(timeout: 10)
        }
        if try runs(workspace).isEmpty {
            #expect(try workspace.offpeak(["run", job]).status == 0)
        }
        return delays
    }

    /// Ticks until one exits 0, at most `limit` times; every tick's result, in order.
    static func tickUntilDone(
        _ workspace: TemporaryWorkspace, _ extra: [String] = [], environment: [String: String?] = [:],
        limit: Int
    ) throws -> [(result: CommandResult, seconds: TimeInterval)] {
        var ticks: [(result: CommandResult, seconds: TimeInterval)] = []
        while ticks.count < limit {
            let started = Date()
            let tick = try workspace.offpeak(["tick"] + extra, environment: environment)
            ticks.append((tick, Date().timeIntervalSince(started)))
            if tick.status != 75 { break }
        }
        return ticks
    }

    // MARK: - Conditions (issue 5)

    /// Issue 5's must-show through the binaries: on battery and a phone's hotspot the job is
    /// deferred with both reasons and the time; a tick under the same conditions keeps it deferred
    /// (since the first time); on AC and WiFi the next tick runs it and the queue is empty.
    @Test func deferredOnBatteryAndWwanShowsBothReasonsThenRunsAtTheNextTick() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace.docs(
            on: sim, documents: 3, extra: "constraints: {power: ac, network: unmetered}")
        let sysfs = try SwitchableSysfs("battery-wwan")
        let environment = ["OFFPEAK_SYSFS_ROOT": sysfs.root.path]
        let reasons = ["waiting for external power", "waiting for an unmetered network"]

        let run = try workspace.offpeak(["run", "docs"], environment: environment)
        #expect(run.status == 75, "\(run.stdout) \(run.stderr)")
        #expect((run.stdout + run.stderr).contains(reasons.joined(separator: "; ")))

        let text = try workspace.offpeak(["queue"], environment: environment)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains(reasons.joined(separator: "; ")), "\(text.stdout)")
        #expect(text.stdout.contains("on battery"), "\(text.stdout)")
        #expect(
            text.stdout.range(of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, options: .regularExpression) != nil)

        let queued = try Self.json(
            try workspace.offpeak(["queue", "--json"], environment: environment).stdout)
        let entries = try #require(queued["deferred"] as? [[String: Any]])
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry["job"] as? String == "docs")
        #expect(entry["reasons"] as? [String] == reasons)
        let since = try #require(entry["deferred_at"] as? String)
        #expect(ISO8601DateFormatter().date(from: since) != nil, "deferred_at is a time: \(since)")

        let still = try workspace.offpeak(["tick"], environment: environment)
        #expect(still.status == 75, "\(still.stdout) \(still.stderr)")
        #expect(still.stdout.contains("deferred since \(since)"), "\(still.stdout)")
        #expect(try Self.calls(sim) == 0, "nothing was sent while deferred")

        try sysfs.switchTo("ac-wifi")
        let tick = try workspace.offpeak(["tick"], environment: environment)
        #expect(tick.status == 0, "\(tick.stdout) \(tick.stderr)")
        #expect(tick.stdout.contains("3 of 3 items answered"), "\(tick.stdout)")
        #expect(Self.answers(workspace, job: "docs").count == 3)
        #expect(try Self.index(workspace, job: "docs").values.allSatisfy { $0 == "done" })
        let after = try Self.json(
            try workspace.offpeak(["queue", "--json"], environment: environment).stdout)
        #expect((after["deferred"] as? [Any])?.isEmpty == true, "released: \(after)")
        #expect(try Self.calls(sim) == 3)
    }

    // MARK: - One tick at a time

    /// A tick started while another works exits 0 at once, naming the running tick (SQLite: its
    /// pid; PostgreSQL: its host, `TickLockAcrossHostsTests`); the running one is not disturbed.
    @Test func secondTickWhileOneRunsExitsZeroAndSaysSo() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "400"])
        let workspace = try Self.queueWorkspace(sim)
        for index in 1...10 {
            try workspace.write("spool/inbox/q-\(index).txt", "What is \(index) plus one? It is small.")
        }
        let host = ["OFFPEAK_HOST": "box-a"]
        let first = try Self.start(["tick"], in: workspace, environment: host)
        let deadline = Date() + 20
        while try Self.calls(sim) == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try Self.calls(sim) > 0, "the first tick is working")

        let started = Date()
        let second = try workspace.offpeak(["tick"], environment: host)
        let seconds = Date().timeIntervalSince(started)
        #expect(second.status == 0, "\(second.stdout) \(second.stderr)")
        #expect(
            second.stdout
                == (TestStore.onPostgres
                    ? "another tick of host box-a is running on this store; nothing to do\n"
                    : "another tick is running in this workspace (pid \(first.pid)); nothing to do\n"))
        #expect(second.stderr == "")
        #expect(seconds < 3, "at once, not after the first tick: \(seconds) s")

        let done = try #require(first.wait(timeout: 60))
        #expect(done.status == 0, "\(done.stdout) \(done.stderr)")
        #expect(try Self.calls(sim) == 10)
        #expect(Self.answers(workspace, job: "inbox").count == 10)
    }

    // MARK: - Signals

    /// SIGTERM: no new call starts, the call in flight finishes, the run checkpoints as
    /// `interrupted` and the process exits 75; a tick does the rest, asking nothing twice.
    @Test func sigtermStopsNewCallsCheckpointsAndExits75() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "1500"])
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 6)
        try workspace.oneCallInFlight()  // a sequential premise (see `oneCallInFlight`)
        let run = try Self.start(["run", "docs"], in: workspace)
        Thread.sleep(forTimeInterval: 2)
        let signalled = Date()
        run.signal(SIGTERM)
        let stopped = try #require(run.wait(timeout: 30))
        let seconds = Date().timeIntervalSince(signalled)
        #expect(stopped.status == 75, "\(stopped.stdout) \(stopped.stderr)")
        #expect(seconds < 10, "within the grace (10 s): \(seconds) s")
        #expect(stopped.stderr.contains("SIGTERM"), "\(stopped.stderr)")
        #expect(stopped.stdout.contains("stopped by SIGTERM"), "\(stopped.stdout)")

        let state = try #require(try Self.runs(workspace).first)
        #expect(state["state"] as? String == "interrupted")
        let done = try #require(state["items_done"] as? Int)
        #expect(done >= 1 && done < 6, "\(done) items done when stopped")
        #expect(Self.answers(workspace, job: "docs").count == done, "the done items' outputs are written")
        let sentBeforeTick = try Self.calls(sim)
        #expect(sentBeforeTick == done, "the call in flight finished and was kept")

        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 0, "\(tick.stdout) \(tick.stderr)")
        #expect(tick.stdout.contains("6 of 6 items answered (\(6 - done) now)"), "\(tick.stdout)")
        #expect(try Self.runs(workspace).first?["state"] as? String == "completed")
        #expect(try Self.calls(sim) <= 6 + 1)
        #expect(Self.answers(workspace, job: "docs").count == 6)
    }

    /// `kill -9` at random moments of `run` and of the ticks after it: the ticks finish the run with
    /// every answer byte-identical to an uninterrupted run's, at most one call lost per kill.
    @Test func kill9AtAnyMomentResumesWithoutLossOrDoubleAnswers() throws {
        let documents = 12
        let referenceSim = try SimProcess(arguments: ["--latency-ms", "100"])
        let reference = try TemporaryWorkspace.docs(on: referenceSim, documents: documents)
        let clean = try reference.offpeak(["run", "docs"])
        #expect(clean.status == 0, "\(clean.stderr)")
        let expected = Self.answers(reference, job: "docs")
        #expect(expected.count == documents)

        let sim = try SimProcess(arguments: ["--latency-ms", "100"])
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: documents)
        // One call at a time, so a kill loses at most one; with calls in flight the bound is kills
        // times calls in flight (ConcurrentRunTests, scripts/chaos.py).
        try workspace.write(
            "offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nlimits: {sim: {in_flight: 1}}\n")
        let kills = 3
        let delays = try Self.killAtRandom(workspace, job: "docs", kills: kills, after: 0.15...0.9)
        let ticks = try Self.tickUntilDone(workspace, limit: 10)
        let last = try #require(ticks.last)
        #expect(
            last.result.status == 0, "kills after \(delays) s: \(last.result.stdout) \(last.result.stderr)")

        #expect(Self.answers(workspace, job: "docs") == expected, "kills after \(delays) s")
        let states = try Self.index(workspace, job: "docs")
        #expect(states.count == documents)
        #expect(states.values.allSatisfy { $0 == "done" }, "\(states)")
        let calls = try Self.calls(sim)
        #expect(calls >= documents)
        #expect(calls <= documents + kills, "at most the call in flight is lost per kill (\(delays) s)")
        let runs = try Self.runs(workspace)
        #expect(runs.count == 1, "one run, resumed, never a second one")
        #expect(runs.first?["items_done"] as? Int == documents)
    }

    // MARK: - Windows (issue 6)

    /// Issue 6's must-show: a minute of calls (60 documents at 1 s each) through ticks of a 5 s
    /// window. Each tick stops starting calls that would not fit, checkpoints and exits 75, and
    /// keeps to its window; the ticks together finish the job, asking nothing twice.
    ///
    /// The run is created deferred (the job waited for AC on battery), so that every call of it is
    /// made by a windowed tick.
    @Test func fiveSecondWindowFinishesAMinuteJobAcrossTicks() throws {
        let documents = 60
        let sim = try SimProcess(arguments: ["--latency-ms", "1000"])
        let workspace = try TemporaryWorkspace.docs(
            on: sim, documents: documents, extra: "constraints: {power: ac}")
        // A minute of calls one at a time (with eight in flight it is a few ticks' work).
        try workspace.write(
            "offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nlimits: {sim: {in_flight: 1}}\n")
        let sysfs = try SwitchableSysfs("battery-wifi")
        let environment = ["OFFPEAK_SYSFS_ROOT": sysfs.root.path]
        let deferred = try workspace.offpeak(["run", "docs"], environment: environment)
        #expect(deferred.status == 75, "\(deferred.stdout) \(deferred.stderr)")
        try sysfs.switchTo("ac-wifi")

        // 60 s of calls in 5 s windows takes at least 12 ticks; 30 ticks is one call and a bit each.
        let limit = 30
        let ticks = try Self.tickUntilDone(
            workspace, ["--window", "5s"], environment: environment, limit: limit)
        var progress: [Int] = []
        for tick in ticks {
            if let match = tick.result.stdout.firstMatch(of: /\((\d+) now\)/), let now = Int(match.1) {
                progress.append(now)
            }
        }
        let summary =
            "\(ticks.count) ticks answering \(progress), taking \(ticks.map { Int($0.seconds * 10) }) ds"
        let last = try #require(ticks.last)
        #expect(last.result.status == 0, "\(summary); last: \(last.result.stdout) \(last.result.stderr)")
        for tick in ticks.dropLast() {
            #expect(tick.result.status == 75, "\(tick.result.stdout) \(tick.result.stderr)")
            #expect(tick.result.stdout.contains("window ends in"), "\(tick.result.stdout)")
        }
        for tick in ticks {
            #expect(tick.seconds < 10, "a 5 s tick took \(tick.seconds) s")
        }
        #expect(ticks.count >= 6, "\(summary)")
        // A call takes 1 s: a 5 s window holds about four of them, not one.
        #expect(
            progress.dropLast().allSatisfy { $0 >= 2 },
            "each windowed tick fits several 1 s calls: \(summary)")
        #expect(Self.answers(workspace, job: "docs").count == documents, "\(summary)")
        #expect(try Self.calls(sim) == documents, "nothing asked twice: \(summary)")
    }

    // MARK: - Overlapping ticks and runs

    /// Ticks started two at a time (as cron and a user's `offpeak tick` may), and now and then a
    /// `run` racing a tick, over rounds of new spool files: the lock and the lease let exactly one
    /// of them work, and every item is answered once, in one run.
    @Test func concurrentTicksNeverRunAnItemTwice() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "20"])
        let workspace = try Self.queueWorkspace(sim)
        let rounds = 15
        var names: [String] = []
        var outcomes: [String] = []
        for round in 1...rounds {
            for slot in 1...3 {
                let name = String(format: "q-%02d-%d", round, slot)
                names.append(name)
                try workspace.write(
                    "spool/inbox/\(name).txt", "Question \(round) of slot \(slot)? It needs an answer.")
            }
            let racingRun = round % 4 == 2
            let first = try Self.start(racingRun ? ["run", "inbox"] : ["tick"], in: workspace)
            let second = try Self.start(["tick"], in: workspace)
            let one = try #require(first.wait(timeout: 60))
            let two = try #require(second.wait(timeout: 60))
            outcomes.append("\(round): \(one.status)/\(two.status)")
            for result in [one, two] {
                let said = result.stdout + result.stderr
                #expect(result.status == 0 || result.status == 75, "round \(round): \(said)")
                if result.status == 75 {
                    #expect(
                        said.contains("is being run by"),
                        "round \(round): the loser names the holder: \(said)")
                }
            }
            if !racingRun {
                #expect(one.status == 0 && two.status == 0, "round \(round): \(one.stdout) | \(two.stdout)")
            }
        }
        // Whatever a loser left (spooled but not run) the next tick does.
        let sweep = try Self.tickUntilDone(workspace, limit: 3)
        #expect(sweep.last?.result.status == 0, "\(sweep.last?.result.stdout ?? "")")

        #expect(try Self.calls(sim) == names.count, "every item asked once: \(outcomes)")
        let answers = Self.answers(workspace, job: "inbox")
        #expect(Set(answers.keys) == Set(names.map { "\($0).md" }), "\(answers.keys.sorted())")
        for name in names {
            let round = name.dropFirst(2).prefix(2)
            #expect(answers["\(name).md"]?.hasPrefix("Answer: Question \(Int(round) ?? 0) of slot") == true)
        }
        let runs = try Self.runs(workspace)
        let total = runs.compactMap { $0["items_total"] as? Int }.reduce(0, +)
        let done = runs.compactMap { $0["items_done"] as? Int }.reduce(0, +)
        #expect(total == names.count, "no item is in two runs")
        #expect(done == names.count)
        #expect(
            runs.allSatisfy { $0["state"] as? String == "completed" }, "\(runs.map { $0["state"] ?? "" })")
        #expect(
            !FileManager.default.fileExists(
                atPath: workspace.root.appendingPathComponent("spool/inbox/q-01-1.txt").path))
    }

    /// Two `offpeak run` of a queue job started at once (no workspace lock between them) both take
    /// the spool folder: each file goes into the store once, and the process that finds a file
    /// already moved by the other goes on, rather than failing with "cannot move ... to taken/".
    @Test func twoRunsTakingOneSpoolFolderNeitherFailsNorAsksTwice() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "20"])
        let workspace = try Self.queueWorkspace(sim)
        var total = 0
        for round in 1...4 {
            for slot in 1...10 {
                try workspace.write(
                    "spool/inbox/r\(round)-\(slot).txt", "Round \(round) asks \(slot)? It is a question.")
            }
            total += 10
            let first = try Self.start(["run", "inbox"], in: workspace)
            let second = try Self.start(["run", "inbox"], in: workspace)
            for result in [try #require(first.wait(timeout: 60)), try #require(second.wait(timeout: 60))] {
                let said = result.stdout + result.stderr
                #expect(
                    result.status == 0 || (result.status == 75 && said.contains("is being run by")),
                    "round \(round), exit \(result.status): \(said)")
            }
        }
        let sweep = try workspace.offpeak(["run", "inbox"])
        #expect(sweep.status == 0, "\(sweep.stderr)")
        #expect(Self.answers(workspace, job: "inbox").count == total)
        #expect(try Self.calls(sim) == total, "every spooled file asked once")
    }

    /// Commands started at the same moment on a workspace with no store yet (a cron tick and two
    /// agents' `submit`, say) all open it: the schema is created once, not raced (which failed with
    /// `table "runs" already exists`).
    @Test func commandsStartedTogetherOnAFreshWorkspaceAllOpenTheStore() throws {
        for trial in 1...5 {
            let workspace = try TemporaryWorkspace()
            try workspace.write("offpeak.yaml", "provider: sim\nbase_url: http://127.0.0.1:9\n")
            let started = try (1...6).map { _ in try Self.start(["status", "--json"], in: workspace) }
            for process in started {
                let result = try #require(process.wait(timeout: 60))
                #expect(result.status == 0, "trial \(trial): \(result.stderr)")
            }
        }
    }

    // MARK: - The chaos script

    /// `scripts/NAME` run on the built binaries with `arguments`, given two and a half minutes.
    static func chaos(_ name: String, _ arguments: [String]) throws -> CommandResult {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let script = root.appendingPathComponent("scripts/" + name)
        return try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", script.path, "--bin", BuiltBinaries.directory.path] + arguments, timeout: 150)
    }

    /// `scripts/chaos.py` (what `make chaos` runs with 100 kills), with a few kills.
    @Test func chaosScriptPassesWithFewKills() throws {
        let result = try Self.chaos(
            "chaos.py", ["--kills", "3", "--items", "60"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("outputs identical"), "\(result.stdout)")
    }

    /// The same with a fallback (issue 50): a fifth of the provider's calls answer 529 and a second
    /// sim stands behind it; killed mid-run, every item is answered once, by one or the other, and
    /// the outputs equal the reference.
    @Test func chaosScriptWithAFallbackPassesWithFewKills() throws {
        let result = try Self.chaos(
            "chaos.py", ["--kills", "3", "--items", "60", "--fallback", "0.2"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(
            lines.contains("answered twice         0 (the ledger holds 60 answered items)"),
            "\(result.stdout)")
        #expect(lines.contains("outputs identical      yes"), "\(result.stdout)")
    }

    /// `scripts/chaos_batch.py` (what `make chaos-batch` runs with 50 kills), with a few kills: the
    /// batch lane killed mid-submit, mid-poll and mid-collect still answers and bills each item once.
    @Test func batchChaosScriptPassesWithFewKills() throws {
        let result = try Self.chaos(
            "chaos_batch.py", ["--kills", "4", "--items", "60", "--batch-delay", "1", "--seed", "7"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("chaos-batch: passed"), "\(result.stdout)")
    }
}

/// A process started in the background, its output drained as it comes, so it never blocks on a
/// full pipe.
final class Spawned: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var output: [Int: Data] = [:]
    private let drained = DispatchGroup()

    init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        for (slot, pipe) in [(1, out), (2, err)] {
            drained.enter()
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread { [self] in
                let data = handle.readDataToEndOfFile()
                lock.withLock { output[slot] = data }
                drained.leave()
            }
        }
    }

    var pid: Int32 { process.processIdentifier }

    func signal(_ number: Int32) {
        if process.isRunning { kill(pid, number) }
    }

    /// Waits up to `timeout` seconds for the process to end; nil (after killing it) if it did not.
    func wait(timeout: TimeInterval) -> Finished? {
        let deadline = Date() + timeout
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        drained.wait()
        return lock.withLock {
            Finished(
                status: process.terminationStatus,
                stdout: String(decoding: output[1] ?? Data(), as: UTF8.self),
                stderr: String(decoding: output[2] ?? Data(), as: UTF8.self))
        }
    }

    struct Finished {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    deinit {
        if process.isRunning { kill(pid, SIGKILL) }
    }
}
