import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A run against offpeak-sim under a workspace's daily budget (issue 14, item 1): it spends up to
/// the budget and no further, waits in the deferred queue saying why and when it resumes, and goes
/// on the next day, with the clock the budgets read moved a day on.
@Suite(.ownThreads) struct BudgetRunTests {
    /// $1 per thousand input tokens and $10 per thousand output tokens: a call of about 20 input
    /// tokens and at most 20 output tokens may cost about $0.22.
    static let prices = """
        {"budget-model": {"input_cost_per_token": 1e-03, "output_cost_per_token": 1e-02,
                          "max_input_tokens": 100000, "max_output_tokens": 4000}}
        """

    static func workspace(sim: SimProcess, budget: String, items: Int, job: String = "j", extra: String = "")
        throws -> TemporaryWorkspace
    {
        let workspace = try TemporaryWorkspace()
        try workspace.write("prices.json", prices)
        try workspace.write(
            "offpeak.yaml",
            """
            provider: sim
            base_url: \(sim.url)
            prices: prices.json
            models: {sim: {fast: budget-model}}
            http: {max_retries: 0}
            \(budget)
            """)
        let list = (1...items).map { "  - \"Say something short about the number \($0).\"" }
        try workspace.write(
            "jobs/\(job).yaml",
            "kind: prompt\ntier: fast\ntemplate: \"{{item}}\"\nbatching: off\nmax_tokens: 20\n\(extra)\nitems:\n"
                + list.joined(separator: "\n") + "\n")
        return workspace
    }

    static func run(_ workspace: TemporaryWorkspace, job: String = "j", at now: Date) throws -> RunOutcome {
        let context = try JobRunnerIntegrationTests.context(workspace)
        var options = JobRunner.Options()
        options.clock = { now }
        return try context.run(try context.loadJob(job), options: options)
    }

    /// The ledger's dollars per local day, as the budgets count them.
    static func dollarsByDay(_ workspace: TemporaryWorkspace) throws -> [String: Double] {
        let store = try JobRunnerIntegrationTests.context(workspace).openStore()
        return Dictionary(
            uniqueKeysWithValues: try store.ledger.costsByDay(calendar: .current).map {
                ($0.key, $0.spend.dollars)
            })
    }

    @Test func aRunSpendsUpToTheDailyBudgetThenWaitsForTheNextDay() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, budget: "budget: {per_day: 0.50}", items: 6)
        let today = Date()
        let first = try Self.run(workspace, at: today)
        #expect(first.status == .temporaryFailure)
        #expect(first.run.state == .waiting)
        #expect(first.deferred == [.budget])
        #expect(first.run.itemsDone > 0 && first.run.itemsDone < 6)
        let store = try JobRunnerIntegrationTests.context(workspace).openStore()
        let queued = try #require(try store.schedules.deferred().first)
        #expect(queued.job == "j")
        #expect(queued.reasons.hasPrefix("daily budget reached, resumes after 00:00 ($0."))
        #expect(
            try store.count("budget_reservations") == 0)
        let billed = try sim.billed()
        let simDollars =
            Double(billed["input_tokens"] ?? 0) * 1e-3 + Double(billed["output_tokens"] ?? 0) * 1e-2
        #expect(simDollars <= 0.5)
        #expect(abs(first.spend.dollars - simDollars) < 1e-9)
        // The same day, nothing more is sent.
        let again = try Self.run(workspace, at: today + 60)
        #expect(again.run.itemsDone == first.run.itemsDone)
        #expect(try sim.billed() == billed)
        // Day by day, the rest is done, each day within the budget.
        var day = 1
        var outcome = again
        while outcome.run.state != .completed, day < 6 {
            outcome = try Self.run(workspace, at: today + Double(day) * 86_400)
            day += 1
        }
        #expect(outcome.run.state == .completed)
        #expect(outcome.run.itemsDone == 6)
        #expect(try store.schedules.deferred().isEmpty, "the run released its deferral when it resumed")
        let days = try Self.dollarsByDay(workspace)
        #expect(days.count >= 2)
        for (name, dollars) in days { #expect(dollars <= 0.5, "\(name): $\(dollars)") }
    }

    /// A provider batch's requests are reserved before it is created, and the batch holds the
    /// budget at its worst case until it is collected: no second batch passes it meanwhile.
    @Test func providerBatchesCountAgainstTheDailyBudgetUntilCollected() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "600"])
        let workspace = try Self.workspace(
            sim: sim, budget: "budget: {per_day: 0.50}", items: 8, extra: "lane: batch")
        let first = try Self.run(workspace, at: Date())
        #expect(first.run.state == .waiting)
        #expect(first.deferred == [.budget])
        let store = try JobRunnerIntegrationTests.context(workspace).openStore()
        let worst = try store.value(
            "SELECT COALESCE(SUM(worst_dollars), 0) FROM provider_batches", as: Double.self)
        let inBatch = try store.runs.summary(runID: first.run.id, state: .inBatch).count
        #expect(inBatch > 0 && inBatch < 8)
        #expect(worst > 0 && worst <= 0.5)
        #expect(
            try store.count("budget_reservations") == 0)
        let day = BudgetLimits(workspace: WorkspaceBudget(perDay: 0.5)).periods(at: Date()).day
        #expect(try store.ledger.budgetUse(in: day).reservedDollars == worst)
        // The same day, the batch out still holds the budget: nothing more is submitted.
        let again = try Self.run(workspace, at: Date())
        #expect(again.deferred == [.budget])
        #expect(try store.runs.summary(runID: first.run.id, state: .inBatch).count == inBatch)
        #expect(
            try store.batches.batchCount() == 1)
    }
}
