import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `budget:` in offpeak.yaml and `per_day` in a job spec (issue 14, item 1): read as written, and
/// a wrong value named by file, line, column and field, with the configuration's exit status.
@Suite(.ownThreads) struct WorkspaceBudgetConfigTests {
    @Test func readsDollarAndTokenBudgets() throws {
        let config = try WorkspaceConfigParser.parse(
            yaml: """
                budget:
                  per_day: 2.00
                  per_month: 30
                  per_day_tokens: 2000000
                  per_month_tokens: 40000000
                """, path: "offpeak.yaml")
        #expect(
            config.budget
                == WorkspaceBudget(
                    perDay: 2, perMonth: 30, perDayTokens: 2_000_000, perMonthTokens: 40_000_000))
        #expect(
            try WorkspaceConfigParser.parse(yaml: "lane: auto\n", path: "offpeak.yaml").budget.isSet == false)
    }

    @Test(arguments: [
        (
            "budget:\n  per_day: -1\n",
            "offpeak.yaml:2:12: budget.per_day: expected a number more than 0 and at most 1_000_000, got '-1'"
        ),
        (
            "budget: {per_month: lots}\n",
            "offpeak.yaml:1:21: budget.per_month: expected a number more than 0 and at most 1_000_000, got 'lots'"
        ),
        (
            "budget:\n  per_day_tokens: 1.5\n",
            "offpeak.yaml:2:19: budget.per_day_tokens: expected a whole number from 1 to 1_000_000_000_000, got '1.5'"
        ),
        (
            "budget: 2.00\n",
            "offpeak.yaml:1:9: budget: expected a mapping of fields (per_day, per_month, per_day_tokens, "
                + "per_month_tokens), got '2.00'"
        ),
    ])
    func refusesAWrongBudget(yaml: String, message: String) throws {
        let error = #expect(throws: OffpeakError.self) {
            try WorkspaceConfigParser.parse(yaml: yaml, path: "offpeak.yaml")
        }
        #expect(error?.status == .configuration)
        #expect(error?.description == message)
    }

    @Test func readsAJobsPerDay() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "jobs/j.yaml", "kind: prompt\ntemplate: \"{{item}}\"\nbudget: {per_day: 0.5}\nitems: [a]\n")
        try workspace.write(
            "jobs/bad.yaml", "kind: prompt\ntemplate: \"{{item}}\"\nbudget:\n  per_day: 0\nitems: [a]\n")
        let spec = try JobSpecParser.load(
            path: workspace.root.appendingPathComponent("jobs/j.yaml"), workspace: workspace.root)
        #expect(spec.budget.perDay == 0.5)
        let error = #expect(throws: OffpeakError.self) {
            try JobSpecParser.load(
                path: workspace.root.appendingPathComponent("jobs/bad.yaml"), workspace: workspace.root)
        }
        #expect(
            error?.description
                == "jobs/bad.yaml:4:12: budget.per_day: expected a number more than 0 and at most 1_000_000, got '0'"
        )
    }
}
