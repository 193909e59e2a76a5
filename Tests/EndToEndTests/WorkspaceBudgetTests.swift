import Foundation
import OffpeakTestSupport
import Testing

/// Issue 14's must-show for workspace budgets, through the built binaries against offpeak-sim:
/// runs and ticks racing against a daily budget never spend past it (the sim's billed dollars),
/// the rest waits in the deferred queue saying why, and ticks finish it on the next days.
///
/// "The next day" is simulated by moving the ledger's rows one day back (with Python's sqlite3
/// on the store file): the binaries read the real clock, and what the budget counts as today's
/// spend is the ledger rows of the local day.
@Suite(.ownThreads, .serialized) struct WorkspaceBudgetTests {
    /// $1 per thousand input tokens, $10 per thousand output tokens.
    static let prices = """
        {"budget-model": {"input_cost_per_token": 1e-03, "output_cost_per_token": 1e-02,
                          "max_input_tokens": 100000, "max_output_tokens": 4000}}
        """

    static func workspace(_ sim: SimProcess, budget: String) throws -> TemporaryWorkspace {
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
        for job in ["a", "b"] {
            let items = (1...5).map { "  - \"Say something short about \(job) number \($0).\"" }
            try workspace.write(
                "jobs/\(job).yaml",
                "kind: prompt\ntier: fast\ntemplate: \"{{item}}\"\nbatching: off\nmax_tokens: 20\nitems:\n"
                    + items.joined(separator: "\n") + "\n")
        }
        try workspace.write(
            "jobs/inbox.yaml",
            "kind: prompt\nqueue: true\ntier: fast\ntemplate: \"{{item}}\"\nbatching: off\nmax_tokens: 20\n")
        for index in 1...3 {
            try workspace.write("spool/inbox/note\(index).txt", "Say something about note \(index).")
        }
        return workspace
    }

    /// What the sim billed, at the test's prices.
    static func simDollars(_ sim: SimProcess) throws -> Double {
        let billed = try sim.billed()
        #expect((billed["cache_read_input_tokens"] ?? 0) + (billed["cache_creation_input_tokens"] ?? 0) == 0)
        return Double(billed["input_tokens"] ?? 0) * 1e-3 + Double(billed["output_tokens"] ?? 0) * 1e-2
    }

    /// Moves every ledger row one day back: for the budgets, the next day has begun.
    static func nextDay(_ workspace: TemporaryWorkspace) throws {
        if TestStore.onPostgres {
            try workspace.psql("UPDATE ledger SET at = at - interval '1 day'")
            return
        }
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("UPDATE ledger SET at = strftime('%Y-%m-%d %H:%M:%f', at, '-1 day')")
            db.commit()
            """
        let result = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-c", script, workspace.root.appendingPathComponent("cache/offpeak.sqlite").path])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// The deferred queue's reasons, by job.
    static func deferred(_ workspace: TemporaryWorkspace) throws -> [String: String] {
        let queue = try workspace.offpeak(["queue", "--json"])
        #expect(queue.status == 0, "\(queue.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(queue.stdout.utf8)) as? [String: Any])
        let entries = try #require(object["deferred"] as? [[String: Any]])
        var reasons: [String: String] = [:]
        for entry in entries {
            let job = try #require(entry["job"] as? String)
            let list = (entry["reasons"] as? [String]) ?? []
            reasons[job] = list.joined(separator: "; ")
        }
        return reasons
    }

    @Test func runsAndTicksRacingNeverSpendPastTheDailyBudgetAndFinishOnLaterDays() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim, budget: "budget: {per_day: 1.00}")
        let racers = try [["run", "a"], ["run", "b"], ["tick"], ["tick"], ["run", "a"]].map {
            try TickTests.start($0, in: workspace)
        }
        let finished = racers.map { $0.wait(timeout: 120) }
        for (index, done) in finished.enumerated() {
            let done = try #require(done, "racer \(index) did not finish")
            #expect([0, 75].contains(done.status), "racer \(index): \(done.status) \(done.stderr)")
        }
        var spent = try Self.simDollars(sim)
        #expect(spent > 0 && spent <= 1.00, "the sim billed $\(spent) against a $1.00 daily budget")
        let waiting = try Self.deferred(workspace)
        #expect(!waiting.isEmpty, "13 items at about $0.15 each cannot all fit in $1.00")
        for (job, reason) in waiting {
            #expect(reason.hasPrefix("daily budget reached, resumes after 00:00 ($"), "\(job): \(reason)")
        }
        // Day after day, a tick alone resumes what waits, within each day's budget.
        var days = 0
        var tick = try workspace.offpeak(["tick"])
        while tick.status == 75, days < 6 {
            let before = spent
            try Self.nextDay(workspace)
            tick = try workspace.offpeak(["tick"])
            spent = try Self.simDollars(sim)
            #expect(spent - before <= 1.00, "day \(days + 1) spent $\(spent - before)")
            days += 1
        }
        #expect(tick.status == 0, "\(tick.stdout)\(tick.stderr)")
        #expect(days >= 1)
        #expect(try Self.deferred(workspace).isEmpty)
        for job in ["a", "b"] {
            #expect(workspace.snapshot("out/\(job)").count == 6, "five answers and the index")
        }
        #expect(workspace.snapshot("out/inbox").count == 4, "three answers and the index")
    }

    /// `status` shows spend against each workspace budget; a run the daily budget stopped says why.
    @Test func statusShowsSpendAgainstEachBudget() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace()
        try workspace.write("prices.json", Self.prices)
        try workspace.write(
            "offpeak.yaml",
            """
            provider: sim
            base_url: \(sim.url)
            prices: prices.json
            models: {sim: {fast: budget-model}}
            budget: {per_day: 0.40, per_month: 30.00, per_day_tokens: 100000}
            """)
        try workspace.write(
            "jobs/a.yaml",
            """
            kind: prompt
            tier: fast
            template: "{{item}}"
            batching: off
            max_tokens: 20
            items: ["Say a", "Say b", "Say c", "Say d", "Say e", "Say f", "Say g", "Say h"]
            """)
        let reason =
            "daily budget reached, resumes after 00:00 ($0.2100 spent and $0.00 reserved of $0.4000, "
            + "and the next call may cost up to $0.2020)"
        let run = try workspace.offpeak(["run", "a"])
        #expect(run.status == 75)
        #expect(
            run.stdout == """
                job a deferred part-way (\(reason)); 5 of 8 items answered (5 now); `offpeak tick` goes on once \
                the budget allows
                outputs: out/a/
                cost: $0.2100 for 5 calls, 10 input and 20 output tokens (naive $0.2100, saved $0.00)

                """)
        let runs = try TickTests.runs(workspace)
        let id = try #require(runs.first?["id"] as? String)
        let status = try workspace.offpeak(["status"])
        #expect(status.status == 0)
        #expect(
            status.stdout == """
                spend today: $0.2100 in 5 calls (naive $0.2100)
                budget today: $0.2100 of $0.4000 spent, $0.00 reserved in flight
                budget this month: $0.2100 of $30.00 spent, $0.00 reserved in flight
                token budget today: 30 of 100000 tokens spent, 0 reserved in flight
                \("RUN".padding(toLength: id.count + 2, withPad: " ", startingAt: 0))STATE    ITEMS  CALLS  COST     WHY
                \(id)  waiting  5/8    5      $0.2100  \(reason)

                """)
    }
}
