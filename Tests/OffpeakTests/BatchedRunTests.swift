import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Batched prompts end to end: the planner, the sim's batch mode, the splitter and the ledger.
@Suite(.ownThreads) struct BatchedRunTests {
    /// A workspace with a prompt job of `count` inline questions sharing long instructions.
    /// `audit` is off unless a test asks for it: these runs are about batching, and the audit's
    /// probes would add calls of their own (`BatchAuditRunTests` turns it on).
    static func workspace(
        sim: SimProcess, count: Int, batching: String, promptCache: Bool = true, audit: String = "off"
    ) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        // claude-sonnet-4-5 caches the ~1,500-token instructions (claude-haiku-4-5, the default
        // for `fast`, caches nothing under 4,096 tokens), with the same price ratios.
        try workspace.write(
            "offpeak.yaml",
            "provider: sim\nbase_url: \(sim.url)\nhttp: {max_retries: 1}\nmodels: {sim: {fast: claude-sonnet-4-5}}\n"
        )
        let examples = (1...90).map { "Example \($0): the ticket says the printer jams; label: hardware." }
        var spec = """
            name: classify
            kind: prompt
            tier: fast
            system: You label support tickets.
            instructions: "\(examples.joined(separator: " "))"
            template: "{{item}}"
            max_tokens: 40
            batching: \(batching)
            prompt_cache: \(promptCache)
            audit: \(audit)
            items:

            """
        for index in 1...count {
            spec +=
                "  - {id: t\(index), item: \"Ticket \(index) reports problem \(index * 13). It started today.\"}\n"
        }
        try workspace.write("jobs/classify.yaml", spec)
        return workspace
    }

    static func run(_ workspace: TemporaryWorkspace) throws -> RunOutcome {
        try workspace.run(job: "classify")
    }

    /// The answer files, without the index (which names the run).
    static func answers(_ workspace: TemporaryWorkspace) -> [String: String] {
        workspace.snapshot("out/classify").filter { $0.key != "index.json" }
    }

    @Test func batchedAnswersEqualOneRequestPerItemAndCostLess() throws {
        let sim = try SimProcess()
        let single = try Self.workspace(sim: sim, count: 20, batching: "off", promptCache: false)
        let alone = try Self.run(single)
        #expect(alone.spend.calls == 20)
        _ = try sim.request("POST", "/sim/reset")
        let batched = try Self.workspace(sim: sim, count: 20, batching: "{max_items: 8}")
        let outcome = try Self.run(batched)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.spend.calls == 3, "8 + 8 + 4 items")
        #expect(Self.answers(batched).count == 20)
        #expect(Self.answers(single) == Self.answers(batched), "every item got its own answer")
        let billed = try sim.billed()
        #expect(outcome.spend.inputTokens == billed["input_tokens"])
        #expect(outcome.spend.cacheReadTokens == billed["cache_read_input_tokens"])
        #expect(outcome.spend.cacheWriteTokens == billed["cache_creation_input_tokens"])
        #expect(outcome.spend.outputTokens == billed["output_tokens"])
        #expect(
            outcome.spend.cacheReadTokens > 0, "the shared instructions are read from the provider's cache")
        #expect(outcome.spend.dollars * 3 < alone.spend.dollars)
        #expect(abs(outcome.spend.naiveDollars - alone.spend.dollars) < 1e-9, "naive is one request per item")
        let store = try batched.openStore()
        let shares = try store.runs.results(runID: outcome.run.id).values.reduce(0) { $0 + $1.dollars }
        #expect(abs(shares - outcome.spend.dollars) < 1e-9, "the call's cost is shared out to its items")
    }

    @Test func damagedBatchesStillAnswerEveryItemCorrectly() throws {
        let sim = try SimProcess()
        let reference = try Self.workspace(sim: sim, count: 40, batching: "off")
        _ = try Self.run(reference)
        let damaging = try SimProcess(arguments: ["--damage-rate", "0.3", "--seed", "11"])
        let workspace = try Self.workspace(sim: damaging, count: 40, batching: "{max_items: 8}")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 40)
        #expect(outcome.spend.calls > 5, "damaged items were asked again")
        #expect(Self.answers(reference) == Self.answers(workspace))
        let stats = try damaging.stats()
        let damage = stats["damage"] as? [String: Int] ?? [:]
        #expect(damage.values.reduce(0, +) > 0, "the sim did damage answers")
    }
}
