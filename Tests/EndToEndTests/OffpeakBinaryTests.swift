import Foundation
import OffpeakTestSupport
import Testing

/// The built `offpeak` binary against the built `offpeak-sim`, as a user runs them.
@Suite(.ownThreads) struct OffpeakBinaryTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func runPrintsOutputsAndCostAndLedgerEqualsSimStats() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 5)
        let run = try workspace.offpeak(["run", "docs"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("5 of 5 items answered"))
        #expect(run.stdout.contains("outputs: out/docs/"))
        #expect(run.stdout.contains("cost: $"))
        #expect(workspace.snapshot("out/docs").count == 6, "five answers and index.json")

        let costs = try workspace.offpeak(["costs", "--json"])
        let total = try #require(try Self.json(costs.stdout)["total"] as? [String: Any])
        let billed = try sim.billed()
        #expect(total["calls"] as? Int == 5)
        #expect(total["input_tokens"] as? Int == billed["input_tokens"])
        #expect(total["output_tokens"] as? Int == billed["output_tokens"])

        let status = try workspace.offpeak(["status", "--json"])
        let runs = try #require(try Self.json(status.stdout)["runs"] as? [[String: Any]])
        #expect(runs.first?["state"] as? String == "completed")
        #expect(runs.first?["items_done"] as? Int == 5)
    }

    @Test func summarizeCommandWritesOneAnswerPerFile() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 2)
        let result = try workspace.offpeak(
            ["summarize", "docs/doc-001.md", "docs/doc-002.md", "--out", "out/s", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try Self.json(result.stdout)
        #expect(report["items_done"] as? Int == 2)
        #expect(workspace.read("out/s/docs-doc-001.md")?.contains("document number 1") == true)
    }

    @Test(
        arguments: [
            ("kind: summarize\ninputs: [docs/*.md]\n  bad: [\n", "docs.yaml:3"),
            ("kind: summarize\ninputs: [docs/*.md]\nmax_tokenz: 10\n", "docs.yaml:3:1: max_tokenz"),
            ("kind: summarize\ninputs: [docs/*.md]\nmax_tokens: lots\n", "docs.yaml:3:13: max_tokens"),
            ("kind: prompt\nitems: [a, b]\ntemplate: \"Q: {{question}}\"\n", "docs.yaml:3:11: template"),
        ])
    func malformedSpecExits65AndLeavesTheStoreAlone(spec: String, expected: String) throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 1)
        #expect(try workspace.offpeak(["run", "docs"]).status == 0)
        let database = workspace.root.appendingPathComponent("cache/offpeak.sqlite")
        // The SQLite file, or on PostgreSQL every table's rows.
        func store() throws -> [String: String] {
            if TestStore.onPostgres { return try workspace.databaseRows() }
            return ["file": try Data(contentsOf: database).base64EncodedString()]
        }
        let before = try store()
        try workspace.write("jobs/docs.yaml", spec)
        let result = try workspace.offpeak(["run", "docs"])
        #expect(result.status == 65)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.contains(expected), "\(result.stderr)")
        #expect(try store() == before)
        #expect(try workspace.offpeak(["jobs", "validate"]).status == 65)
    }

    @Test func missingKeyNamesTheVariableAndExits78() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.writeDocuments(1)
        try workspace.write("jobs/docs.yaml", "kind: summarize\ninputs: [docs/*.md]\n")
        let result = try workspace.offpeak(
            ["run", "docs"], environment: ["ANTHROPIC_API_KEY": nil, "OFFPEAK_LOG_LEVEL": nil])
        #expect(result.status == 78)
        #expect(result.stderr.contains("ANTHROPIC_API_KEY"))
        #expect(result.stderr.contains("--provider sim"))
        #expect(
            !FileManager.default.fileExists(
                atPath: workspace.root.appendingPathComponent("cache/offpeak.sqlite").path))
    }

    @Test func apiKeyIsNeverWrittenAnywhere() throws {
        let key = "sk-offpeak-secret-7f3a9c"
        let sim = try SimProcess(arguments: ["--require-key", key])
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 3)
        try workspace.write("offpeak.yaml", "provider: openai\nbase_url: \(sim.url)/v1\n")
        let result = try workspace.offpeak(
            ["run", "docs", "--verbose"], environment: ["OPENAI_API_KEY": key])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains(key) && !result.stderr.contains(key))
        let files = FileManager.default.enumerator(at: workspace.root, includingPropertiesForKeys: nil)
        var checked = 0
        while let url = files?.nextObject() as? URL {
            guard let data = FileManager.default.contents(atPath: url.path) else { continue }
            #expect(data.range(of: Data(key.utf8)) == nil, "key found in \(url.path)")
            checked += 1
        }
        #expect(checked >= 5, "the store and the outputs were searched")
    }

    /// Killing the provider mid-run: a clear error, the run interrupted, done items kept, and the
    /// next run does only the rest.
    /// Items of the run whose provider is killed: enough that it cannot finish before the kill.
    static let killedRunItems = 40

    @Test func simKilledMidRunInterruptsAndResumes() throws {
        // The sim dies as a killed process would when the third call arrives: at a point in the run
        // (a killer thread polling the sim lost the race on a loaded machine, and the run finished).
        let sim = try SimProcess(arguments: ["--crash-after", "2"])
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: Self.killedRunItems)
        try workspace.write(
            "offpeak.yaml",
            // One call at a time, so exactly the first two answers are out when it dies
            // (ConcurrentRunTests kills the provider with calls in flight).
            "provider: sim\nbase_url: \(sim.url)\nhttp: {connect_timeout: 1s, max_retries: 1}\n"
                + "limits: {sim: {in_flight: 1}}\n")
        let first = try workspace.offpeak(["run", "docs"])
        #expect(first.status == 75, "\(first.stdout) \(first.stderr)")
        #expect(first.stderr.contains("unreachable"))
        let status = try Self.json(try workspace.offpeak(["status", "--json"]).stdout)
        let run = try #require((status["runs"] as? [[String: Any]])?.first)
        #expect(run["state"] as? String == "waiting", "offline: the provider is unreachable")
        let done = try #require(run["items_done"] as? Int)
        #expect(done == 2)
        #expect(workspace.snapshot("out/docs").count == done + 1, "done items' outputs are kept")

        let second = try SimProcess()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(second.url)\n")
        let resumed = try workspace.offpeak(["run", "docs"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(
            resumed.stdout.contains(
                "\(Self.killedRunItems) of \(Self.killedRunItems) items answered (\(Self.killedRunItems - done) now)"
            ))
        #expect((try second.stats()["calls"] as? Int) == Self.killedRunItems - done)
    }

    /// The official Python SDKs parse the sim's answers. They are installed when missing, and the
    /// test fails (it skipped before) when they cannot be.
    @Test func officialSDKsParseSimAnswers() throws {
        try PythonPackages.require(
            ["anthropic", "openai"], packages: ["anthropic", "openai"],
            for: "check that the SDKs parse the sim's answers")
        let sim = try SimProcess()
        let script = BuiltBinaries.packageRoot.appendingPathComponent("scripts/sdk_check.py")
        let result = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, "--base", sim.url])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("sdk_check: ok"))
    }

    /// Google's `google-genai` SDK parses the sim's Gemini answers and drives its Batch Mode.
    @Test func googlesSDKParsesSimGeminiAnswers() throws {
        try PythonPackages.require(
            ["google.genai"], packages: ["google-genai"],
            for: "check that Google's SDK parses the sim's answers")
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let script = BuiltBinaries.packageRoot.appendingPathComponent("scripts/gemini_sdk_check.py")
        let result = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, "--base", sim.url])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout == "gemini_sdk_check: ok\n")
    }

    /// Mistral's `mistralai` SDK reads the sim's Mistral API and drives its batch jobs.
    @Test func mistralsSDKDrivesSimBatchJobs() throws {
        try PythonPackages.require(
            ["mistralai.client"], packages: ["mistralai"],
            for: "check that Mistral's SDK reads the sim's answers")
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let script = BuiltBinaries.packageRoot.appendingPathComponent("scripts/mistral_sdk_check.py")
        let result = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, "--base", sim.url])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout == "mistral_sdk_check: ok\n")
    }
}
