import Foundation
import OffpeakTestSupport
import Testing

/// `offpeak audit JOB` end to end: a job run against a sim model whose batched answers go wrong
/// after the fourth item, and the report a user reads afterwards, compared whole.
struct AuditCommandTests {
    /// 16 tickets in prompts of up to 8, one call in flight (so the audit's rows come in order),
    /// with the audit allowed the whole run (16 items are too few for its default 3 %).
    static func workspace(on sim: SimProcess, count: Int = 16, batching: String = "{max_items: 8}") throws
        -> TemporaryWorkspace
    {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml",
            "provider: sim\nbase_url: \(sim.url)\nmodels: {sim: {fast: claude-sonnet-4-5}}\n"
                + "limits: {sim: {in_flight: 1}}\n")
        let examples = (1...90).map { "Example \($0): the ticket says the printer jams; label: hardware." }
        var spec = """
            kind: prompt
            tier: fast
            system: You label support tickets.
            instructions: "\(examples.joined(separator: " "))"
            template: "{{item}}"
            max_tokens: 40
            batching: \(batching)
            audit: {rate: 0.0001, max_share: 1}
            items:

            """
        for index in 1...count {
            spec +=
                "  - {id: t\(index), item: \"Ticket \(index) reports problem \(index * 13). It started today.\"}\n"
        }
        try workspace.write("jobs/classify.yaml", spec)
        return workspace
    }

    static func dollars(_ value: Double) -> String {
        "$" + String(format: value < 0.01 ? "%.6f" : value < 1 ? "%.4f" : "%.2f", value)
    }

    @Test func theReportSaysWhatAgreedWhereWhatItDecidedAndWhatItCost() throws {
        let sim = try SimProcess(arguments: [
            "--degrading-model", "claude-sonnet-4-5:wrong-label:4", "--seed", "7",
        ])
        let workspace = try Self.workspace(on: sim)
        let before = try workspace.offpeak(["audit", "classify"])
        #expect(before.status == 0)
        #expect(
            before.stdout
                == "no audited items for classify yet: its batched answers are audited as it runs (min_agreement 0.90)\n"
        )
        let ran = try workspace.offpeak(["run", "classify"])
        #expect(ran.status == 0, "\(ran.stderr)")

        let json = try workspace.offpeak(["audit", "classify", "--json"])
        #expect(json.status == 0)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let audit = try #require(object["audit_dollars"] as? Double)
        let job = try #require(object["job_dollars"] as? Double)
        let models = try #require(object["models"] as? [[String: Any]])
        let model = try #require(models.first)
        let probe = try #require(model["probe_at"] as? String)
        let decisions = try #require(model["decisions"] as? [[String: Any]])
        let times = decisions.compactMap { $0["at"] as? String }
        #expect(times.count == 2)
        #expect(model["cap"] as? Int == 4 && model["failed_size"] as? Int == 8)

        let text = try workspace.offpeak(["audit", "classify"])
        #expect(text.status == 0)
        #expect(text.stderr == "")
        let share = String(format: "%.1f%%", audit / job * 100)
        let expected = """
            classify: 8 batched items also asked alone, 6 agreed (75.0%); min_agreement 0.90
            audit cost: 8 calls, \(Self.dollars(audit)) (\(share) of the job's \(Self.dollars(job)))
            claude-sonnet-4-5: at most 4 items a prompt, 8 tried again after \(probe)

            BATCH SIZE  AUDITED  AGREED  AGREEMENT  95% INTERVAL
            4           4        4       100.0%     51.0%-100.0%
            8           4        2       50.0%      15.0%-85.0%

            POSITION  AUDITED  AGREED  AGREEMENT  95% INTERVAL
            1         2        2       100.0%     34.2%-100.0%
            2         1        1       100.0%     20.7%-100.0%
            3         2        2       100.0%     34.2%-100.0%
            4         1        1       100.0%     20.7%-100.0%
            5         1        0       0.0%       0.0%-79.3%
            8         1        0       0.0%       0.0%-79.3%

            decisions:
              \(times.first ?? "")  batched prompts of 8 items to claude-sonnet-4-5 change answers (2 of 4 audited items agreed): at most 4 items a prompt from now on
              \(times.last ?? "")  batched prompts of 4 items to claude-sonnet-4-5 hold up (4 of 4 audited items agreed)

            disagreed (the item keeps its single answer):
            ITEM  SIZE  POSITION  SIMILARITY  BATCHED          SINGLE
            t5    8     5         0.00        Answer: feature  Answer: Ticket 5 reports problem 65.
            t8    8     8         0.00        Answer: billing  Answer: Ticket 8 reports problem 104.

            """
        #expect(text.stdout == expected)

        // What the run wrote is what each item gets alone.
        for index in 1...16 {
            #expect(
                workspace.read("out/classify/t\(index).md")
                    == "Answer: Ticket \(index) reports problem \(index * 13).\n", "t\(index)")
        }
    }
}
