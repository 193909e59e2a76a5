import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Real jobs through libcurl to a real `offpeak-sim` on loopback, into a real SQLite store.
@Suite(.ownThreads) struct JobRunnerIntegrationTests {
    /// A workspace whose `offpeak.yaml` points at `sim`, with `documents` small docs and a summarize job.
    static func workspace(
        sim: SimProcess, documents: Int = 3, timeout: String = "5s", budget: String = "",
        maxTokens: Int = 200,
        batching: String = "off"
    ) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml",
            """
            provider: sim
            base_url: \(sim.url)
            http: {connect_timeout: 2s, timeout: \(timeout), max_retries: 3}
            """)
        try workspace.writeDocuments(documents)
        try workspace.write(
            "jobs/docs.yaml",
            """
            kind: summarize
            tier: fast
            inputs: [docs/*.md]
            max_tokens: \(maxTokens)
            batching: \(batching)
            \(budget)
            """)
        return workspace
    }

    static func context(_ workspace: TemporaryWorkspace) throws -> WorkspaceContext {
        try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
            logger: Logger(label: "test"))
    }

    static func run(_ workspace: TemporaryWorkspace, job: String = "docs") throws -> RunOutcome {
        let context = try context(workspace)
        return try context.run(try context.loadJob(job))
    }

    /// A tick picks a job for its unfinished run, and another process finishes that run before the
    /// pass opens it (stop 52's CI: three hosts ticking, a slot answered twice): the pass starts no
    /// new run and asks nothing.
    @Test func aRunToResumeThatEndedMeanwhileIsNotStartedAnew() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: 2)
        let first = try Self.run(workspace)
        #expect(first.run.state == .completed)
        var picked = first.run
        picked.state = .running  // as the tick listed it
        let context = try Self.context(workspace)
        var options = JobRunner.Options()
        options.resuming = picked
        let outcome = try context.run(try context.loadJob("docs"), options: options)
        #expect(outcome.status == .ok && outcome.answeredNow == 0)
        #expect(outcome.run.id == first.run.id && outcome.run.state == .completed)
        #expect(
            outcome.message
                == "job docs: run \(first.run.id) is completed (it ended after this tick looked); nothing to resume"
        )
        #expect(try context.openStore().runs.runs().count == 1)
        #expect(try sim.stats()["calls"] as? Int == 2)
    }

    @Test func summarizesEveryDocumentAndLedgerMatchesSimBilling() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: 4)
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok)
        #expect(outcome.run.state == .completed)
        #expect(outcome.run.itemsDone == 4)
        for index in 1...4 {
            let text = try #require(workspace.read("out/docs/docs-doc-00\(index).md"))
            #expect(text.contains("This is document number \(index)."))
        }
        let billed = try sim.billed()
        #expect(outcome.spend.calls == 4)
        #expect(outcome.spend.inputTokens == billed["input_tokens"])
        #expect(outcome.spend.outputTokens == billed["output_tokens"])
        #expect(outcome.spend.cacheReadTokens == billed["cache_read_input_tokens"])
        #expect(outcome.spend.cacheWriteTokens == billed["cache_creation_input_tokens"])
        #expect(outcome.spend.dollars > 0)
        let file = workspace.root.appendingPathComponent("cache/offpeak.sqlite").path
        guard !TestStore.onPostgres else {
            #expect(!FileManager.default.fileExists(atPath: file), "the store is the workspace's database")
            return
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    /// Each fault the sim injects once is survived by a retry: every item ends up answered.
    @Test(arguments: ["429", "500", "529", "nonjson", "truncate", "timeout"])
    func retriesPastOneInjectedFault(fault: String) throws {
        let sim = try SimProcess(arguments: ["--timeout-delay", "3", "--retry-after", "1"])
        let workspace = try Self.workspace(sim: sim, documents: 2, timeout: "1s")
        try sim.queueFaults([fault])
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 2)
        let stats = try sim.stats()
        #expect((stats["calls"] as? Int) == 3, "one failed call and two answered ones")
        #expect(outcome.spend.inputTokens == (try sim.billed())["input_tokens"])
    }

    @Test func providerDownInterruptsAndTheNextRunDoesOnlyTheRest() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: 3)
        try workspace.oneCallInFlight()  // a sequential premise (see `oneCallInFlight`)
        try sim.queueFaults(["500", "500", "500", "500"])
        // Item 1 meets four 500s in a row (three retries): the run stops, interrupted, nothing lost.
        let first = try Self.run(workspace)
        #expect(first.status == .temporaryFailure)
        #expect(first.run.state == .interrupted)
        #expect(first.message.contains("HTTP 500"))
        #expect(first.run.itemsDone == 0)
        let second = try Self.run(workspace)
        #expect(second.status == .ok)
        #expect(second.run.id == first.run.id, "the same run resumes")
        #expect(second.run.itemsDone == 3)
        #expect(second.answeredNow == 3)
    }

    @Test func budgetStopsBeforeTheCallThatWouldPassIt() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: 4, budget: "budget: {max_calls: 2}")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .temporaryFailure)
        #expect(outcome.run.state == .interrupted)
        #expect(outcome.run.budgetStop == "max_calls")
        #expect(outcome.run.itemsDone == 2)
        #expect((try sim.stats()["calls"] as? Int) == 2)
        let report = try StatusReport.make(store: try Self.context(workspace).openStore())
        #expect(report.text.contains("max_calls"))
    }

    /// A cut answer was billed: it is kept, and the run says so (`CutOffAnswerTests` end to end).
    @Test func answerCutAtMaxTokensIsKeptAndSaidClearly() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: 2, maxTokens: 3)
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok)
        #expect(outcome.run.state == .completed)
        #expect(outcome.run.itemsDone == 2 && outcome.run.itemsFailed == 0)
        #expect(
            outcome.run.reason
                == "2 answers cut off, kept as they are and marked in index.json (first: answer cut off at "
                + "max_tokens (3); raise max_tokens in the spec)")
        #expect(outcome.spend.calls == 2, "the cut answers were billed and are in the ledger")
    }

    @Test func rejectedKeyStopsTheRunAsConfiguration() throws {
        let sim = try SimProcess(arguments: ["--require-key", "right-key"])
        let workspace = try Self.workspace(sim: sim, documents: 2)
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .configuration)
        #expect(outcome.run.state == .interrupted, "resumable once the key is fixed")
        #expect(outcome.message.contains("401"))
    }

    @Test func openAIShapeThroughTheSameRunner() throws {
        let sim = try SimProcess(arguments: ["--require-key", "sk-test"])
        let workspace = try Self.workspace(sim: sim, documents: 2)
        try workspace.write("offpeak.yaml", "provider: openai\nbase_url: \(sim.url)/v1\n")
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root),
            environment: try workspace.environment(["OPENAI_API_KEY": "sk-test"]),
            logger: Logger(label: "test"))
        let outcome = try context.run(try context.loadJob("docs"))
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 2)
        #expect(
            outcome.spend.inputTokens + outcome.spend.cacheReadTokens == (try sim.billed())["input_tokens"])
    }
}
