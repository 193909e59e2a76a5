import Foundation
import OffpeakTestSupport
import Testing

/// Hosts that do not match (issue 23, item 7), through the built binary on the pass's engine: an
/// offpeak older than the store's schema refuses it and writes nothing; the same job with different
/// specs on two hosts is refused on both, naming the hosts and the fields, until they agree.
@Suite(.ownThreads) struct StoreMismatchTests {
    /// Every table's rows: on PostgreSQL as the server dumps them, on SQLite as Python's sqlite3
    /// dumps the file (GRDB's opening of a pool touches the file's header, never a row).
    static func rows(_ workspace: TemporaryWorkspace) throws -> [String: String] {
        if TestStore.onPostgres { return try workspace.databaseRows() }
        let result = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                "import sqlite3, sys; print('\\n'.join(sqlite3.connect(sys.argv[1]).iterdump()))",
                workspace.root.appendingPathComponent("cache/offpeak.sqlite").path,
            ])
        try #require(result.status == 0, "\(result.stderr)")
        return ["dump": result.stdout]
    }

    /// Runs one statement on the workspace's store, as a newer offpeak (or a hand) would.
    static func sql(_ workspace: TemporaryWorkspace, sqlite: String, postgres: String) throws {
        if TestStore.onPostgres {
            try workspace.psql(postgres)
            return
        }
        let result = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()",
                workspace.root.appendingPathComponent("cache/offpeak.sqlite").path, sqlite,
            ])
        try #require(result.status == 0, "\(result.stderr)")
    }

    @Test func aStoreANewerOffpeakMigratedIsRefusedAndLeftAsItWas() throws {
        let sim = try SimProcess()
        let workspace = try OutputsCommandTests.workspace(on: sim)
        #expect(try workspace.offpeak(["run", "fruit"]).status == 0)
        // SQLite counts its migrations; PostgreSQL numbers its versions. Either way, one more than
        // this offpeak knows.
        let info = try workspace.offpeak(["store", "info", "--json"])
        let known = try #require(try TickTests.json(info.stdout)["known_schema_version"] as? Int)
        try Self.sql(
            workspace,
            sqlite: "INSERT INTO grdb_migrations VALUES ('v\(known + 1): what a newer offpeak added')",
            postgres: "INSERT INTO offpeak_schema (version) VALUES (\(known + 1))")
        let expected: String
        if TestStore.onPostgres {
            let url = try #require(try workspace.storeEnvironment()["OFFPEAK_STORE"])
            let (endpoint, database) = try Self.endpoint(url)
            expected =
                "offpeak: the PostgreSQL store at \(endpoint) database '\(database)' has schema version "
                + "\(known + 1), newer than this offpeak knows (\(known)); upgrade offpeak\n"
        } else {
            let path = workspace.root.appendingPathComponent("cache/offpeak.sqlite").path
            expected =
                "offpeak: the SQLite store at \(path) has schema version \(known + 1), newer than this "
                + "offpeak knows (\(known)); upgrade offpeak\n"
        }
        let before = try Self.rows(workspace)
        let commands = [
            ["tick"], ["run", "fruit"], ["status"], ["hosts"], ["outputs", "fruit"], ["store", "info"],
            ["estimate", "fruit"],
        ]
        for command in commands {
            let result = try workspace.offpeak(command)
            #expect(result.status == 78, "\(command): \(result.stderr)")
            #expect(result.stdout == "", "\(command)")
            #expect(result.stderr == expected, "\(command)")
        }
        #expect(try Self.rows(workspace) == before)
        #expect(try sim.stats()["calls"] as? Int == 4, "only the first run called")
    }

    /// `host:port` and the database of a test cluster's URL, as offpeak names them.
    static func endpoint(_ url: String) throws -> (String, String) {
        let rest = try #require(url.split(separator: "@", maxSplits: 1).last)
        let parts = rest.split(separator: "/", maxSplits: 1)
        let database = try #require(parts.last?.split(separator: "?").first)
        return (String(parts[0]), String(database))
    }

    /// box-a runs `fruit`; box-b has another template and max_tokens for it. Each refuses the job
    /// (run: 78; tick: the job is skipped, saying why) until both have the same spec; an edit
    /// deployed to box-a too then runs. On PostgreSQL each host is its own workspace on the shared
    /// database; on SQLite, whose store is one workspace's file, both use one workspace and each
    /// puts its own spec file in place before its command.
    @Test func theSameJobWithTwoSpecsOnTwoHostsRunsNowhereUntilTheyAgree() throws {
        let sim = try SimProcess()
        let first = try OutputsCommandTests.workspace(on: sim)
        let second = TestStore.onPostgres ? try OutputsCommandTests.workspace(on: sim) : first
        let shared = try first.storeEnvironment().mapValues { Optional($0) }
        let old = OutputsCommandTests.spec(template: "Tell me about {{item}}.")
        let new = OutputsCommandTests.spec(template: "Say something new about {{item}}.")
            .replacingOccurrences(of: "max_tokens: 100", with: "max_tokens: 120")
        func offpeak(_ host: String, spec: String, _ arguments: [String]) throws -> CommandResult {
            let workspace = host == "box-a" ? first : second
            try workspace.write("jobs/fruit.yaml", spec)
            return try workspace.offpeak(
                arguments, environment: shared.merging(["OFFPEAK_HOST": host]) { $1 })
        }
        let tail = "it runs once every host that ran or ticked it in the last hour has the same spec"

        let ran = try offpeak("box-a", spec: old, ["run", "fruit"])
        #expect(ran.status == 0, "\(ran.stderr)")
        let refused = try offpeak("box-b", spec: new, ["run", "fruit"])
        #expect(refused.status == 78)
        #expect(refused.stdout == "")
        #expect(
            refused.stderr
                == "offpeak: job fruit: its spec differs between hosts box-b and box-a (fields: max_tokens, template); \(tail)\n"
        )
        // box-a, still on the old spec, sees box-b's now: its tick skips the job and says why.
        let tick = try offpeak("box-a", spec: old, ["tick"])
        #expect(tick.status == 78)
        #expect(
            tick.stdout
                == "error: job fruit: its spec differs between hosts box-a and box-b (fields: max_tokens, template); \(tail)\nnothing to do\n"
        )
        #expect(try offpeak("box-a", spec: old, ["run", "fruit"]).status == 78)
        #expect(try sim.stats()["calls"] as? Int == 4, "nothing ran on either spec")

        // The edit reaches box-a: both hosts have the same spec, and the job runs on each.
        let deployed = try offpeak("box-a", spec: new, ["run", "fruit"])
        #expect(deployed.status == 0, "\(deployed.stderr)")
        #expect(deployed.stdout.hasPrefix("job fruit: 4 of 4 items answered (4 now)\n"), "\(deployed.stdout)")
        let agreed = try offpeak("box-b", spec: new, ["tick"])
        #expect(agreed.status == 0, "\(agreed.stderr)")
        #expect(agreed.stdout == "nothing to do\n")
    }
}
