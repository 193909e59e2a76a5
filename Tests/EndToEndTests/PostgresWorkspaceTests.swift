import Foundation
import OffpeakTestSupport
import Testing

/// A workspace whose store is a PostgreSQL database does what a workspace on the embedded SQLite
/// file does: the same job writes the same answers, bills the same calls and reports the same
/// costs, and the SQLite file is never made; a server that is down is a temporary failure.
@Suite(.ownThreads) struct PostgresWorkspaceTests {
    @Test func aJobOnPostgreSQLWritesAndBillsWhatItDoesOnSQLite() throws {
        let sim = try SimProcess()
        let cluster = PostgresCluster.shared
        let url = try cluster.makeDatabase()
        let onSQLite = try TemporaryWorkspace.docs(on: sim, documents: 5)
        let onPostgres = try TemporaryWorkspace.docs(on: sim, documents: 5)
        let postgres: [String: String?] = ["OFFPEAK_STORE": url, "PGPASSWORD": cluster.password]
        let sqlite: [String: String?] = ["OFFPEAK_STORE": nil]

        let first = try onPostgres.offpeak(["run", "docs"], environment: postgres)
        #expect(first.status == 0, "\(first.stderr)")
        let reference = try onSQLite.offpeak(["run", "docs"], environment: sqlite)
        #expect(first.stdout == reference.stdout)
        #expect(
            first.stdout.hasPrefix("job docs: 5 of 5 items answered (5 now)\noutputs: out/docs/\ncost: $"))
        var answers = onPostgres.snapshot("out/docs")
        answers["index.json"] = nil
        var expected = onSQLite.snapshot("out/docs")
        expected["index.json"] = nil
        #expect(answers.count == 5)
        #expect(answers == expected)

        // The second run answers from the cache the first one filled, on the server.
        let again = try onPostgres.offpeak(["run", "docs"], environment: postgres)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == (try onSQLite.offpeak(["run", "docs"], environment: sqlite)).stdout)
        #expect(again.stdout.contains("cost: $0.00 for 0 calls"), "\(again.stdout)")
        for report in [["costs", "--by", "model"], ["queue"]] {
            let shown = try onPostgres.offpeak(report, environment: postgres)
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(shown.stdout == (try onSQLite.offpeak(report, environment: sqlite)).stdout)
        }
        let status = try onPostgres.offpeak(["status", "--json"], environment: postgres)
        let runs =
            try #require(
                try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])["runs"]
            as? [[String: Any]]
        #expect(runs?.map { $0["state"] as? String } == ["completed", "completed"])
        #expect(runs?.map { $0["items_cached"] as? Int } == [5, 0])
        #expect(
            try sim.stats()["calls"] as? Int == 10, "five calls for each workspace's first run, none after")
        #expect(
            !FileManager.default.fileExists(
                atPath: onPostgres.root.appendingPathComponent("cache/offpeak.sqlite").path))
    }

    /// Nothing answers on port 5: every command that reads or writes the store says which server it
    /// could not reach (exit 75, try again later) and makes no SQLite file in its place.
    @Test(arguments: [["status"], ["queue"], ["costs"], ["cache", "stats"], ["run", "docs"], ["tick"]])
    func aServerThatIsDownIsATemporaryFailureNotTheSQLiteFile(command: [String]) throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml", "provider: sim\nstore: postgresql://offpeak@127.0.0.1:5/offpeak\n")
        try workspace.write("jobs/docs.yaml", "kind: prompt\ntemplate: \"{{item}}\"\nitems: [a]\n")
        let result = try workspace.offpeak(command, environment: ["OFFPEAK_STORE": nil, "PGPASSWORD": "pw"])
        #expect(result.status == 75)
        #expect(
            result.stderr
                == "offpeak: cannot reach PostgreSQL at 127.0.0.1:5 (database 'offpeak') (Connection refused)\n"
        )
        #expect(
            !FileManager.default.fileExists(
                atPath: workspace.root.appendingPathComponent("cache/offpeak.sqlite").path))
    }
}
