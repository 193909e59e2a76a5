import Foundation
import OffpeakTestSupport
import Testing

/// `offpeak outputs JOB [--run RUN]` end to end (issue 23, item 5): a job's output folder written
/// again from the store comes out byte for byte as the run that finished wrote it, for the newest
/// finished run or an older one named, from the same workspace or (PostgreSQL) another host's.
@Suite(.ownThreads) struct OutputsCommandTests {
    /// A workspace on `sim` with the prompt job `fruit`: four items, one with an id that is not a
    /// file name, batching off so every item is its own call.
    static func workspace(on sim: SimProcess, template: String = "Tell me about {{item}}.") throws
        -> TemporaryWorkspace
    {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write("jobs/fruit.yaml", spec(template: template))
        return workspace
    }

    static func spec(template: String) -> String {
        """
        kind: prompt
        template: "\(template)"
        items:
          - {id: apples, item: apples}
          - {id: pears, item: pears}
          - {id: "stone fruit/plums?", item: plums}
          - {id: cherries, item: cherries}
        batching: off
        max_tokens: 100

        """
    }

    /// Every file in the workspace's `folder`, by name, as bytes.
    static func files(_ workspace: TemporaryWorkspace, _ folder: String = "out/fruit") throws -> [String:
        Data]
    {
        let base = workspace.root.appendingPathComponent(folder)
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: base.path) {
            files[name] = try Data(contentsOf: base.appendingPathComponent(name))
        }
        return files
    }

    /// The run a finished `run` wrote its outputs from, as its index says.
    static func runID(_ workspace: TemporaryWorkspace) throws -> String {
        let index = try #require(workspace.read("out/fruit/index.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(index.utf8)) as? [String: Any])
        return try #require(object["run"] as? String)
    }

    @Test func aDeletedOrChangedFolderIsWrittenAgainByteForByte() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(on: sim)
        let ran = try workspace.offpeak(["run", "fruit"])
        #expect(ran.status == 0, "\(ran.stderr)")
        let original = try Self.files(workspace)
        #expect(
            original.keys.sorted() == [
                "apples.md", "cherries.md", "index.json", "pears.md", "stone-fruit-plums-.md",
            ])
        let run = try Self.runID(workspace)

        try FileManager.default.removeItem(at: workspace.root.appendingPathComponent("out/fruit"))
        let rewritten = try workspace.offpeak(["outputs", "fruit"])
        #expect(rewritten.status == 0, "\(rewritten.stderr)")
        #expect(rewritten.stderr == "")
        #expect(
            rewritten.stdout
                == "job fruit: outputs of run \(run) written to out/fruit/ (4 item files, 4 of them rewritten, and index.json)\n"
        )
        #expect(try Self.files(workspace) == original)

        // A file changed, one gone and the index emptied: those three are written again, the rest
        // left as they are.
        try workspace.write("out/fruit/apples.md", "edited by hand\n")
        try FileManager.default.removeItem(at: workspace.root.appendingPathComponent("out/fruit/pears.md"))
        try workspace.write("out/fruit/index.json", "")
        let again = try workspace.offpeak(["outputs", "fruit", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stdout == """
                {
                  "files" : 4,
                  "job" : "fruit",
                  "output" : "out/fruit",
                  "rewritten" : 2,
                  "run" : "\(run)"
                }

                """)
        #expect(try Self.files(workspace) == original)
        #expect(try sim.stats()["calls"] as? Int == 4, "rewriting outputs calls no provider")
    }

    /// Two finished runs of one job with different templates write different answers to the same
    /// file names: `--run` brings back the older run's folder, and no `--run` the newer one's.
    @Test func runNamesAnOlderRunWhoseFolderComesBack() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(on: sim)
        #expect(try workspace.offpeak(["run", "fruit"]).status == 0)
        let first = try Self.files(workspace)
        let firstRun = try Self.runID(workspace)
        try workspace.write("jobs/fruit.yaml", Self.spec(template: "Say something new about {{item}}."))
        let second = try workspace.offpeak(["run", "fruit"])
        #expect(second.status == 0, "\(second.stderr)")
        let latest = try Self.files(workspace)
        let secondRun = try Self.runID(workspace)
        #expect(secondRun != firstRun)
        #expect(latest.keys.sorted() == first.keys.sorted())
        #expect(latest["apples.md"] != first["apples.md"], "the new template gets new answers")

        let older = try workspace.offpeak(["outputs", "fruit", "--run", firstRun])
        #expect(older.status == 0, "\(older.stderr)")
        #expect(
            older.stdout
                == "job fruit: outputs of run \(firstRun) written to out/fruit/ (4 item files, 4 of them rewritten, and index.json)\n"
        )
        #expect(try Self.files(workspace) == first)
        let newest = try workspace.offpeak(["outputs", "fruit"])
        #expect(newest.status == 0, "\(newest.stderr)")
        #expect(
            newest.stdout
                == "job fruit: outputs of run \(secondRun) written to out/fruit/ (4 item files, 4 of them rewritten, and index.json)\n"
        )
        #expect(try Self.files(workspace) == latest)
    }

    /// Another host's workspace on the same store, without the job's spec, writes the folder the
    /// run was made with, byte for byte. A SQLite store is one workspace's file, which a second
    /// workspace cannot name; so on PostgreSQL only.
    @Test(.enabled(if: TestStore.onPostgres, "a second workspace shares only a PostgreSQL store"))
    func anotherHostsWorkspaceWritesTheSameFolder() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(on: sim)
        #expect(try workspace.offpeak(["run", "fruit"]).status == 0)
        let original = try Self.files(workspace)
        let run = try Self.runID(workspace)
        let other = try TemporaryWorkspace()
        try other.write("offpeak.yaml", "provider: sim\n")
        let shared = try workspace.storeEnvironment().mapValues { Optional($0) }
        let result = try other.offpeak(
            ["outputs", "fruit"], environment: shared.merging(["OFFPEAK_HOST": "box-b"]) { $1 })
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout
                == "job fruit: outputs of run \(run) written to out/fruit/ (4 item files, 4 of them rewritten, and index.json)\n"
        )
        #expect(try Self.files(other) == original)
    }

    @Test func whatCannotBeWrittenIsSaidWithItsExitStatus() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(on: sim)
        #expect(try workspace.offpeak(["run", "fruit"]).status == 0)
        let run = try Self.runID(workspace)
        // A job on AC power only, run on battery: its run waits, unfinished.
        try workspace.write(
            "jobs/late.yaml", "kind: prompt\ntemplate: \"{{item}}\"\nitems: [a]\nconstraints: {power: ac}\n")
        let battery = SwitchableSysfs.fixtures.appendingPathComponent("battery-wwan").path
        #expect(try workspace.offpeak(["run", "late", "--sysfs-root", battery]).status == 75)
        let status = try workspace.offpeak(["status", "--json"])
        let runs = try #require(
            (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["runs"]
                as? [[String: Any]])
        let waiting = try #require(runs.first { $0["job"] as? String == "late" }?["id"] as? String)

        let cases: [([String], Int32, String)] = [
            (
                ["outputs", "nope"], 65,
                "job nope has no finished run in the store; `offpeak status` lists its runs"
            ),
            (
                ["outputs", "late"], 65,
                "job late has no finished run in the store; `offpeak status` lists its runs"
            ),
            (["outputs", "fruit", "--run", "fruit-1"], 65, "run fruit-1: no such run in the store"),
            (["outputs", "late", "--run", run], 65, "run \(run) is a run of job fruit, not of late"),
            (
                ["outputs", "late", "--run", waiting], 65,
                "run \(waiting) is waiting, not finished: its outputs are written as it runs"
            ),
            (["outputs", "fruit", "--run", ""], 64, "--run: expected a run's id, got ''"),
            (["outputs", ""], 64, "JOB: expected a job's name, got ''"),
        ]
        try FileManager.default.removeItem(at: workspace.root.appendingPathComponent("out/fruit"))
        for (arguments, status, message) in cases {
            let result = try workspace.offpeak(arguments)
            #expect(result.status == status, "\(arguments)")
            #expect(result.stdout == "")
            #expect(result.stderr == "offpeak: \(message)\n")
        }
        // The job's spec here cannot be read: it says where, and writes nothing.
        try workspace.write(
            "jobs/fruit.yaml", "kind: prompt\ntemplate: \"{{item}}\"\nitems: [a]\nmax_tokens: lots\n")
        let broken = try workspace.offpeak(["outputs", "fruit"])
        #expect(broken.status == 65)
        #expect(
            broken.stderr
                == "offpeak: jobs/fruit.yaml:4:13: max_tokens: expected a whole number from 1 to 200_000, got 'lots'\n"
        )
        // A workspace whose offpeak.yaml names no store offpeak knows: configuration.
        try workspace.write("offpeak.yaml", "provider: sim\nstore: mysql://x/y\n")
        let misconfigured = try workspace.offpeak(["outputs", "fruit"], environment: ["OFFPEAK_STORE": nil])
        #expect(misconfigured.status == 78)
        #expect(
            misconfigured.stderr
                == "offpeak: offpeak.yaml:2:8: store: expected 'sqlite' or a postgresql://USER@HOST:PORT/DATABASE URL\n"
        )
        #expect(
            !FileManager.default.fileExists(atPath: workspace.root.appendingPathComponent("out/fruit").path))
    }
}
