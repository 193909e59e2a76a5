import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// What the model can take, and what it costs (issue 10, items 3 and 4): a request past the
/// context window or the longest answer is never sent; a dollar budget on a model with no price
/// refuses to start; without a budget, the unpriced calls are marked so.
@Suite(.ownThreads) struct ModelLimitsTests {
    static let prices = """
        {"tiny-model": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06,
                        "max_input_tokens": 40, "max_output_tokens": 100},
         "limits-only": {"max_input_tokens": 100000, "max_output_tokens": 4000}}
        """

    /// A prompt job `j` on `model` (tier fast), with the given items and extra spec lines.
    static func workspace(sim: SimProcess, model: String, items: [String], extra: String = "") throws
        -> TemporaryWorkspace
    {
        let workspace = try TemporaryWorkspace()
        try workspace.write("prices.json", prices)
        try workspace.write(
            "offpeak.yaml",
            """
            provider: sim
            base_url: \(sim.url)
            prices: prices.json
            models: {sim: {fast: \(model)}}
            http: {max_retries: 0}
            """)
        let list = items.map { "  - \"\($0)\"" }.joined(separator: "\n")
        try workspace.write(
            "jobs/j.yaml",
            "kind: prompt\ntier: fast\ntemplate: \"{{item}}\"\nbatching: off\nmax_tokens: 50\n\(extra)\nitems:\n\(list)\n"
        )
        return workspace
    }

    static func run(_ workspace: TemporaryWorkspace) throws -> RunOutcome {
        try JobRunnerIntegrationTests.run(workspace, job: "j")
    }

    static func calls(_ sim: SimProcess) throws -> Int { try sim.stats()["calls"] as? Int ?? -1 }

    @Test func aRequestLargerThanTheContextWindowIsNeverSent() throws {
        let sim = try SimProcess()
        let long = String(repeating: "word ", count: 60)  // 300 bytes: about 75 tokens
        let workspace = try Self.workspace(sim: sim, model: "tiny-model", items: ["short question", long])
        let outcome = try Self.run(workspace)
        #expect(try Self.calls(sim) == 1, "only the short item went out")
        #expect(outcome.status == .unavailable)
        let store = try JobRunnerIntegrationTests.context(workspace).openStore()
        let failed = try #require(try store.runs.requests(runID: outcome.run.id, states: [.failed]).first)
        #expect(
            failed.error
                == "not sent: the request is about 75 tokens, more than tiny-model's context window "
                + "(max_input_tokens 40 in the price table); shorten the item")
    }

    @Test func maxTokensPastTheModelsLongestAnswerIsRefusedBeforeAnything() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, model: "tiny-model", items: ["a"])
        try workspace.write(
            "jobs/j.yaml", "kind: prompt\ntier: fast\ntemplate: \"{{item}}\"\nmax_tokens: 500\nitems: [a]\n")
        do {
            _ = try Self.run(workspace)
            Issue.record("the run started")
        } catch let error as OffpeakError {
            #expect(error.status == .dataError)
            #expect(
                error.description
                    == "jobs/j.yaml: max_tokens: 500 is more than tiny-model can write "
                    + "(max_output_tokens 100 in the price table)")
        }
        #expect(try Self.calls(sim) == 0)
        #expect(try JobRunnerIntegrationTests.context(workspace).openStore().runs.runs().isEmpty)
    }

    @Test(arguments: ["mystery-model", "limits-only"])
    func aDollarBudgetOnAModelWithNoPriceRefusesToStart(model: String) throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(
            sim: sim, model: model, items: ["a", "b"], extra: "budget: {max_dollars: 0.50}")
        do {
            _ = try Self.run(workspace)
            Issue.record("the run started")
        } catch let error as OffpeakError {
            #expect(error.status == .configuration)
            #expect(
                error.description
                    == "jobs/j.yaml: job j has a dollar budget (max_dollars $0.5000) but its model \(model) has "
                    + "no price, so the budget could not stop it; add \"\(model)\" with input_cost_per_token "
                    + "and output_cost_per_token to a prices file in LiteLLM's "
                    + "model_prices_and_context_window.json format and name it in offpeak.yaml "
                    + "(prices: prices.json), or remove max_dollars")
        }
        #expect(try Self.calls(sim) == 0)
        #expect(try JobRunnerIntegrationTests.context(workspace).openStore().runs.runs().isEmpty)
    }

    @Test func withoutABudgetAnUnpricedModelRunsAndIsMarkedUnpriced() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, model: "mystery-model", items: ["a", "b"])
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok)
        #expect(outcome.spend.calls == 2 && outcome.spend.unpricedCalls == 2)
        #expect(outcome.spend.costLine.hasPrefix("cost: unpriced for 2 calls, "))
        let store = try JobRunnerIntegrationTests.context(workspace).openStore()
        let report = try CostReport.make(store: store, by: .model)
        #expect(report.unpricedModels == ["mystery-model"])
        #expect(report.text.contains("mystery-model  2      "))
        #expect(
            report.text.hasSuffix(
                "unpriced: 2 calls went to models with no price (mystery-model); their cost is not in these "
                    + "sums: add their prices (offpeak.yaml prices:, in LiteLLM's format)\n"))
    }

    @Test func limitsComeFromThePriceTable() {
        let table = PriceTable.bundled
        let haiku = ModelLimits(model: "claude-haiku-4-5", price: table.price(for: "claude-haiku-4-5"))
        #expect(haiku.maxInputTokens == 200_000 && haiku.maxOutputTokens == 64_000)
        #expect(haiku.outputProblem(maxTokens: 64_000) == nil)
        #expect(
            haiku.outputProblem(maxTokens: 64_001)
                == "64001 is more than claude-haiku-4-5 can write (max_output_tokens 64000 in the price table)"
        )
        let unknown = ModelLimits(model: "local", price: nil)
        #expect(unknown.outputProblem(maxTokens: 1_000_000) == nil, "no limit known, none enforced")
        let legacy = ModelLimits(model: "old", price: ModelPrice(maxTokens: 4096))
        #expect(legacy.maxOutputTokens == 4096, "LiteLLM's max_tokens where max_output_tokens is missing")
    }

    @Test func aCutOffAnswerSaysWhichLimitEndedIt() {
        #expect(
            CallReceipt.cutOffReason(received: 300, limit: 300)
                == "answer cut off at max_tokens (300); raise max_tokens in the spec")
        #expect(
            CallReceipt.cutOffReason(received: 14, limit: 300)
                == "answer cut off after 14 tokens, short of max_tokens (300): the server's own limit ended it "
                + "(a local server's context size?)")
    }
}
