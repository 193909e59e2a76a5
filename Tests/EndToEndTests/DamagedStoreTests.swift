import Foundation
import OffpeakTestSupport
import Testing

/// A store with a row no command can read, or emptied to 0 bytes (issue 10, items 2 and 15),
/// through the built binary.
@Suite(.ownThreads) struct DamagedStoreTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// Runs one SQL statement on the workspace's store with Python's sqlite3, as a hand (or an
    /// older offpeak) would.
    static func sql(_ workspace: TemporaryWorkspace, _ statement: String) throws {
        let result = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()",
                workspace.root.appendingPathComponent("cache/offpeak.sqlite").path, statement,
            ])
        try #require(result.status == 0, "\(result.stderr)")
    }

    /// The run row `deadline: 3000000d` left before offpeak refused such dates: GRDB wrote the
    /// date as "10240-…" and could not read it back, and every status and tick exited 74. Now
    /// status lists it, tick reports it and resumes the other run, `run` of its job says how to
    /// repair it, and the repair it names works.
    // SQLite only: GRDB's text dates past 9999 do not read back; PostgreSQL's timestamptz holds them.
    @Test(.sqliteOnly) func aRunRowPastYear9999StopsNothingButItsOwnJob() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 2)
        try workspace.write("jobs/far.yaml", "kind: prompt\ntemplate: \"{{item}}\"\nitems: [a]\n")
        let down = ["--base-url", "http://127.0.0.1:9"]
        for job in ["docs", "far"] {
            let waiting = try workspace.offpeak(["run", job] + down)
            #expect(waiting.status == 75, "\(waiting.stderr)")
        }
        let before = try #require(
            try Self.json(workspace.offpeak(["status", "--json"]).stdout)["runs"] as? [[String: Any]])
        let ids = Dictionary(
            uniqueKeysWithValues: before.compactMap { run in
                (run["job"] as? String).flatMap { job in (run["id"] as? String).map { (job, $0) } }
            })
        let far = try #require(ids["far"])
        let docs = try #require(ids["docs"])
        try Self.sql(
            workspace, "UPDATE runs SET deadline_at = '10240-08-12 16:10:49.216' WHERE id = '\(far)'")

        let why =
            "deadline_at is \"10240-08-12 16:10:49.216\", not a date the store can read (years 1 to 9999)"
        let repair = "UPDATE runs SET deadline_at = NULL WHERE id = '\(far)'"
        let message =
            "run \(far) of job far cannot be read: \(why); to repair it (a deadline past year 9999 is no "
            + "deadline), in the workspace: sqlite3 cache/offpeak.sqlite \"\(repair)\""

        let status = try workspace.offpeak(["status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        let report = try Self.json(status.stdout)
        #expect((report["runs"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [docs])
        let unreadable = try #require(report["unreadable"] as? [[String: String]])
        #expect(unreadable == [["id": far, "job": "far", "why": why, "repair": repair]])
        let text = try workspace.offpeak(["status"])
        #expect(text.status == 0, "\(text.stderr)")
        let cells = text.stdout.split(separator: "\n").last?.split(
            separator: "  ", omittingEmptySubsequences: true
        )
        .map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(cells == [far, "unreadable", "-", "-", "-", why])

        let fixture = SwitchableSysfs.fixtures.appendingPathComponent("ac-wifi").path
        let queue = try workspace.offpeak(["queue", "--json", "--sysfs-root", fixture])
        #expect(queue.status == 0, "\(queue.stderr)")
        let deferred = try #require(try Self.json(queue.stdout)["deferred"] as? [[String: Any]])
        #expect(
            Set(deferred.compactMap { $0["run"] as? String }) == [docs, far], "both wait for the provider")

        let tick = try workspace.offpeak(["tick", "--json"])
        #expect(tick.status == 74, "\(tick.stderr)")
        let ticked = try Self.json(tick.stdout)
        #expect(ticked["errors"] as? [String] == [message], "reported once")
        let jobs = try #require(ticked["jobs"] as? [[String: Any]])
        #expect(
            jobs.map { "\($0["job"] ?? "") \($0["why"] ?? "") \($0["state"] ?? "")" } == [
                "docs resume completed"
            ])

        let run = try workspace.offpeak(["run", "far"] + down)
        #expect(run.status == 74)
        #expect(run.stderr == "offpeak: \(message)\n")
        #expect(run.stdout == "")

        try Self.sql(workspace, repair)
        let repaired = try workspace.offpeak(["run", "far"])
        #expect(repaired.status == 0, "\(repaired.stdout) \(repaired.stderr)")
        let after = try Self.json(workspace.offpeak(["status", "--json"]).stdout)
        #expect((after["unreadable"] as? [Any])?.isEmpty == true)
    }

    /// A store emptied to 0 bytes (a restore gone wrong, `: > file`) was taken for a new one and
    /// its queue was gone without a word: now every command refuses, and the file stays.
    // SQLite only: the SQLite file itself, emptied.
    @Test(.sqliteOnly) func anEmptiedStoreIsRefusedUntilTheFileIsRemoved() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: http://127.0.0.1:9\n")
        let file = try workspace.write("cache/offpeak.sqlite", "")
        let expected =
            "offpeak: \(file.path) is empty (0 bytes): the store that was there (runs, queue, cache, ledger) "
            + "is gone; offpeak does not start a new one over it. To start afresh, remove the file "
            + "(and offpeak.sqlite-wal and offpeak.sqlite-shm, if there)\n"
        for command in [["status"], ["tick"], ["queue"], ["cache", "stats"]] {
            let result = try workspace.offpeak(command)
            #expect(result.status == 74, "\(command)")
            #expect(result.stderr == expected, "\(command)")
        }
        #expect(workspace.read("cache/offpeak.sqlite") == "")
        try FileManager.default.removeItem(at: file)
        let fresh = try workspace.offpeak(["status"])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stdout == "spend today: $0.00 in 0 calls (naive $0.00)\nno runs yet\n")
    }
}
