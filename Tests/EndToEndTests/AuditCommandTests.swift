import Foundation
import OffpeakTestSupport
import Testing

/// `offpeak audit JOB` end to end: a job run against a sim model whose batched answers go wrong
/// after the fourth item, and the report a user reads afterwards, compared whole.
@Suite(.ownThreads) struct AuditCommandTests {
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
                == "no audited items for classify yet: its batched answers are audited as it runs (target 95% agreement)\n"
        )
        let ran = try workspace.offpeak(["run", "classify"])
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(
            ran.stdout.split(separator: "\n").first.map(String.init)
                == "job classify: 16 of 16 items answered (16 now); audit: 4 batched answers replaced by the item's "
                + "single answer, prompts of 4 items unproven (31 more agreeing audits would show they hold up; the next "
                + "run goes on)")

        let json = try workspace.offpeak(["audit", "classify", "--json"])
        #expect(json.status == 0)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let audit = try #require(object["audit_dollars"] as? Double)
        let job = try #require(object["job_dollars"] as? Double)
        #expect(object["target"] as? Double == 0.95 && object["replaced"] as? Int == 4)
        let models = try #require(object["models"] as? [[String: Any]])
        let model = try #require(models.first)
        let probe = try #require(model["probe_at"] as? String)
        let decisions = try #require(model["decisions"] as? [[String: Any]])
        let times = decisions.compactMap { $0["at"] as? String }
        #expect(times.count == 1)
        #expect(model["cap"] as? Int == 4 && model["failed_size"] as? Int == 8)
        let answers = try #require(model["answers"] as? [String: Any])
        #expect(answers["standing"] as? String == "unproven" && answers["agreements_to_prove"] as? Int == 31)

        let text = try workspace.offpeak(["audit", "classify"])
        #expect(text.status == 0)
        #expect(text.stderr == "")
        let share = String(format: "%.1f%%", audit / job * 100)
        // Two probes of 8 (one audited at places 1, 7 and 8, one at 7 and 8): the first's tail
        // fails the size. Its six answers no audit checked go again with the rest, in prompts of 4
        // and 3, each a probe of its size.
        let expected = """
            classify: 10 batched items also asked alone, 6 agreed (60.0%); target 95% agreement at every place of a prompt
            audit cost: 10 calls, \(Self.dollars(audit)) (\(share) of the job's \(Self.dollars(job))); 4 batched answers replaced by the item's single answer

            claude-sonnet-4-5: at most 4 items a prompt, 8 tried again after \(probe); its answers are unproven at 4 (31 more agreeing audits at the tail would show they hold up)
            BATCH SIZE  AUDITED  AGREED  AGREEMENT  95% INTERVAL  AT THE TAIL  TAIL AGREEMENT  95% INTERVAL  NOW
            3           2        2       100.0%     34.2%-100.0%  1 of 1       100.0%          20.7%-100.0%  unproven (32 more)
            4           3        3       100.0%     43.9%-100.0%  2 of 2       100.0%          34.2%-100.0%  unproven (31 more)
            8           5        1       20.0%      3.6%-62.4%    0 of 4       0.0%            0.0%-49.0%    not used
            POSITION  AUDITED  AGREED  AGREEMENT  95% INTERVAL
            1         3        3       100.0%     43.9%-100.0%
            3         1        1       100.0%     20.7%-100.0%
            4         2        2       100.0%     34.2%-100.0%
            7         2        0       0.0%       0.0%-65.8%
            8         2        0       0.0%       0.0%-65.8%

            decisions:
              \(times.first ?? "")  batched prompts of 8 items to claude-sonnet-4-5 change answers (0 of 2 audited at their tail agreed): at most 4 items a prompt from now on

            disagreed (the item keeps its single answer):
            ITEM  SIZE  POSITION  SIMILARITY  BATCHED          SINGLE
            t7    8     7         0.00        Answer: other    Answer: Ticket 7 reports problem 91.
            t8    8     8         0.00        Answer: billing  Answer: Ticket 8 reports problem 104.
            t15   8     7         0.00        Answer: account  Answer: Ticket 15 reports problem 195.
            t16   8     8         0.00        Answer: account  Answer: Ticket 16 reports problem 208.

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
