import Foundation
import OffpeakTestSupport
import Testing

/// The tick lock of a PostgreSQL store (issue 23, item 2), through the built binaries: hosts each
/// with a folder of their own tick one at a time per host name and side by side across hosts, and
/// `offpeak store copy` and the ticks of every host exclude one another.
@Suite(.ownThreads, .serialized) struct TickLockAcrossHostsTests {
    /// A folder of its own on `workspace`'s store: no jobs, so a tick there has nothing to do.
    static func otherFolder(_ sim: SimProcess) throws -> TemporaryWorkspace {
        let folder = try TemporaryWorkspace()
        try folder.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        return folder
    }

    /// `offpeak ARGUMENTS` in `folder` as `host`, on `store`.
    static func offpeak(
        _ arguments: [String], in folder: TemporaryWorkspace, host: String, store: [String: String]
    ) throws -> CommandResult {
        try folder.offpeak(
            arguments, environment: store.merging(["OFFPEAK_HOST": host]) { $1 }.mapValues { Optional($0) })
    }

    /// The copy's lock rows (`store_locks`) that live.
    static func copyLocks(_ workspace: TemporaryWorkspace) throws -> Int {
        Int(try workspace.psql("SELECT count(*) FROM store_locks WHERE name = 'copy' AND expires_at > now()"))
            ?? -1
    }

    @Test(.enabled(if: TestStore.onPostgres, "hosts share only a PostgreSQL store"))
    func aHostTicksOnceAtATimeInAnyFolderOtherHostsAlongsideAndACopyWaits() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "1000"])
        let workspace = try TickTests.queueWorkspace(sim)
        try workspace.oneCallInFlight()
        for index in 1...10 {
            try workspace.write("spool/inbox/q-\(index).txt", "What is \(index) plus one? It is small.")
        }
        let store = try workspace.storeEnvironment()
        let folder = try Self.otherFolder(sim)
        let running = try TickTests.start(["tick"], in: workspace, environment: ["OFFPEAK_HOST": "box-a"])
        let deadline = Date() + 20
        while try TickTests.calls(sim) == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try TickTests.calls(sim) > 0, "the first tick is working")

        // The same host in another folder: skipped at once.
        let same = try Self.offpeak(["tick"], in: folder, host: "box-a", store: store)
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stdout == "another tick of host box-a is running on this store; nothing to do\n")
        #expect(same.stderr == "")
        // Another host ticks alongside: it finds box-a's run, and leaves it (its folder has no spec).
        let runID = try #require(try TickTests.runs(workspace).first?["id"] as? String)
        let owner = "\(ScheduleAcrossHostsTests.machine):\(running.pid)"
        let other = try Self.offpeak(["tick"], in: folder, host: "box-b", store: store)
        #expect(other.status == 0, "\(other.stderr)")
        #expect(
            other.stdout
                == "inbox [resume]: job inbox: run \(runID) is being run by \(owner) on host box-a; this tick leaves it\n"
        )
        #expect(try workspace.psql("SELECT tick_status FROM hosts WHERE name = 'box-b'") == "0")
        // A copy of the store waits for the ticks.
        let copy = try workspace.offpeak(["store", "copy", "--to", "sqlite"])
        #expect(copy.status == 75)
        #expect(copy.stdout == "")
        #expect(copy.stderr == "offpeak: 1 tick is running on this store; copy once it ends\n")
        #expect(workspace.read("cache/offpeak.sqlite") == nil, "nothing written")
        #expect(running.process.isRunning, "all the while the first tick worked")

        let done = try #require(running.wait(timeout: 60))
        #expect(done.status == 0, "\(done.stdout) \(done.stderr)")
        #expect(TickTests.answers(workspace, job: "inbox").count == 10)
        // Its lock went with it.
        #expect(
            try Self.offpeak(["tick"], in: folder, host: "box-a", store: store).stdout == "nothing to do\n")
        #expect(try workspace.offpeak(["store", "copy", "--to", "sqlite"]).status == 0)
    }

    /// A real copy held at its first table (another session locks `runs` for a few seconds): it
    /// holds the store's lock all the while, and the tick of every host is refused with 75.
    @Test(.enabled(if: TestStore.onPostgres, "the store's lock is PostgreSQL's"))
    func everyHostsTickIsRefusedWhileACopyReadsTheStore() throws {
        let sim = try SimProcess()
        let workspace = try TickTests.queueWorkspace(sim)
        #expect(try workspace.offpeak(["tick"]).status == 0, "the store made")
        let store = try workspace.storeEnvironment()
        let folder = try Self.otherFolder(sim)
        let blocking = DispatchGroup()
        blocking.enter()
        DispatchQueue.global().async {
            _ = try? workspace.psql(
                "BEGIN; LOCK TABLE runs IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(6); COMMIT;")
            blocking.leave()
        }
        func runsLocked() throws -> Bool {
            try workspace.psql(
                "SELECT count(*) FROM pg_locks WHERE relation = 'runs'::regclass AND mode = 'AccessExclusiveLock'"
            )
                == "1"
        }
        var deadline = Date() + 10
        while try !runsLocked(), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let copy = try TickTests.start(["store", "copy", "--to", "sqlite"], in: workspace)
        deadline = Date() + 10
        while try Self.copyLocks(workspace) == 0, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(try Self.copyLocks(workspace) == 1, "the copy holds the store")

        for (place, host) in [(workspace, "box-a"), (folder, "box-b")] {
            let tick = try Self.offpeak(["tick"], in: place, host: host, store: store)
            #expect(tick.status == 75, "\(host): \(tick.stdout)")
            #expect(tick.stdout == "")
            #expect(
                tick.stderr
                    == "offpeak: a copy of this store is running (offpeak store copy); tick again once it ends\n"
            )
        }
        #expect(copy.process.isRunning, "the copy was reading all the while")

        blocking.wait()
        let copied = try #require(copy.wait(timeout: 60))
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(try Self.copyLocks(workspace) == 0)
        // The store was copied away: marked moved, it refuses every host's tick, saying where it went.
        let sentence = try workspace.psql("SELECT sentence FROM offpeak_moved")
        #expect(sentence.hasPrefix("this store was moved to sqlite by `offpeak store copy` at "))
        let after = try Self.offpeak(["tick"], in: folder, host: "box-b", store: store)
        #expect(after.status == 78)
        #expect(after.stderr == "offpeak: \(sentence)\n")
    }
}
