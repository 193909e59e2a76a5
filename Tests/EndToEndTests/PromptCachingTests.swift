import Foundation
import OffpeakTestSupport
import Testing

/// Issue 13: `cache_control` only where it pays. The built `offpeak` against the built
/// `offpeak-sim`: a few-shot prefix below the model's minimum cacheable length is billed as plain
/// input (and offpeak's ledger says the same), one above it is cached.
@Suite(.ownThreads) struct PromptCachingTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// A prompt job of `count` tickets sharing about 1,500 tokens of few-shot examples: over
    /// Sonnet 4.5's 1,024-token minimum, under Haiku 4.5's 4,096.
    static func workspace(sim: SimProcess, fastModel: String, count: Int = 5) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nmodels: {sim: {fast: \(fastModel)}}\n")
        let examples = (1...90).map { "Example \($0): the ticket says the printer jams; label: hardware." }
        var spec = """
            name: classify
            kind: prompt
            tier: fast
            system: You label support tickets.
            instructions: "\(examples.joined(separator: " "))"
            template: "{{item}}"
            max_tokens: 40
            batching: off
            items:

            """
        for index in 1...count {
            spec += "  - {id: t\(index), item: \"Ticket \(index) reports problem \(index * 13).\"}\n"
        }
        try workspace.write("jobs/classify.yaml", spec)
        return workspace
    }

    /// The sim's live `billed` counters and `offpeak costs --json`'s total, after a run.
    static func billedAndLedger(_ workspace: TemporaryWorkspace, sim: SimProcess) throws
        -> (billed: [String: Int], ledger: [String: Any])
    {
        let run = try workspace.offpeak(["run", "classify"])
        #expect(run.status == 0, "\(run.stderr)")
        let costs = try workspace.offpeak(["costs", "--json"])
        let ledger = try #require(try json(costs.stdout)["total"] as? [String: Any])
        return (try sim.billed(), ledger)
    }

    @Test func aPrefixBelowTheModelsMinimumIsBilledAsInputAndTheLedgerAgrees() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, fastModel: "claude-haiku-4-5")
        let (billed, ledger) = try Self.billedAndLedger(workspace, sim: sim)
        #expect(billed["cache_creation_input_tokens"] == 0)
        #expect(billed["cache_read_input_tokens"] == 0)
        #expect(ledger["calls"] as? Int == 5)
        #expect(ledger["input_tokens"] as? Int == billed["input_tokens"])
        #expect(ledger["output_tokens"] as? Int == billed["output_tokens"])
        #expect(ledger["cache_read_tokens"] as? Int == 0)
        #expect(ledger["cache_write_tokens"] as? Int == 0)
        // claude-haiku-4-5: $1/M input, $5/M output.
        let dollars = Double(billed["input_tokens"] ?? 0) * 1e-6 + Double(billed["output_tokens"] ?? 0) * 5e-6
        #expect(abs((ledger["dollars"] as? Double ?? -1) - dollars) < 1e-9)
    }

    @Test func theSamePrefixIsCachedForAModelWhoseMinimumItReaches() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, fastModel: "claude-sonnet-4-5")
        let (billed, ledger) = try Self.billedAndLedger(workspace, sim: sim)
        let written = try #require(billed["cache_creation_input_tokens"])
        #expect(written >= 1024, "written once")
        #expect(billed["cache_read_input_tokens"] == 4 * written, "read by the four calls after")
        #expect(ledger["input_tokens"] as? Int == billed["input_tokens"])
        #expect(ledger["cache_read_tokens"] as? Int == billed["cache_read_input_tokens"])
        #expect(ledger["cache_write_tokens"] as? Int == billed["cache_creation_input_tokens"])
    }

    @Test func summarizeWithNoPromptCacheIsAnsweredWithNothingCached() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 2)
        let result = try workspace.offpeak(
            ["summarize", "docs/doc-001.md", "docs/doc-002.md", "--no-prompt-cache", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.json(result.stdout)["items_done"] as? Int == 2)
        let billed = try sim.billed()
        #expect(billed["cache_creation_input_tokens"] == 0 && billed["cache_read_input_tokens"] == 0)
    }
}
