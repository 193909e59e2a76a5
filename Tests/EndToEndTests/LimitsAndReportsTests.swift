import Foundation
import OffpeakTestSupport
import Testing

/// What a user sees of model limits and of calls that all failed (issue 10, items 3 and 20).
@Suite(.ownThreads) struct LimitsAndReportsTests {
    @Test func maxTokensTheModelCannotWriteIsAUsageError() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("a.md", "Some text.\n")
        let zero = try workspace.offpeak(["summarize", "a.md", "--max-tokens", "0", "--provider", "sim"])
        #expect(zero.status == 64)
        #expect(
            zero.stderr == """
                Error: --max-tokens: expected 1 or more, got 0
                Usage: offpeak summarize [<options>] <files> ...
                  See 'offpeak summarize --help' for more information.

                """)
        let huge = try workspace.offpeak(["summarize", "a.md", "--max-tokens", "100000", "--provider", "sim"])
        #expect(huge.status == 64)
        #expect(
            huge.stderr
                == "offpeak: --max-tokens: 100000 is more than claude-haiku-4-5 can write "
                + "(max_output_tokens 64000 in the price table)\n")
        #expect(!FileManager.default.fileExists(atPath: workspace.root.appendingPathComponent("cache").path))
    }

    @Test func statusCountsCallsThatAllFailed() throws {
        let sim = try SimProcess(arguments: ["--fault-rate", "400=1"])
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 4)
        try workspace.oneCallInFlight()  // a sequential premise (see `oneCallInFlight`)
        let run = try workspace.offpeak(["run", "docs"])
        #expect(run.status == 78)
        let json = try #require(
            try JSONSerialization.jsonObject(
                with: Data(try workspace.offpeak(["status", "--json"]).stdout.utf8))
                as? [String: Any])
        let line = try #require((json["runs"] as? [[String: Any]])?.first)
        let id = try #require(line["id"] as? String)
        let reason = try #require(line["reason"] as? String)
        let status = try workspace.offpeak(["status"])
        let padding = String(repeating: " ", count: max(0, id.count - 3))
        #expect(
            status.stdout == """
                spend today: $0.00 in 3 calls (naive $0.00)
                RUN\(padding)  STATE        ITEMS  CALLS         COST   WHY
                \(id)  interrupted  0/4    3 (3 failed)  $0.00  \(reason.prefix(159))…

                """)
        #expect(reason.count > 160, "the table shortens it; --json has it whole")
        #expect(
            reason
                == "the provider refused the last 3 calls alike, with different items: provider answered HTTP "
                + "400 to \(sim.url)/v1/messages: offpeak-sim: simulated refusal of this request (fault 400); that is the configuration "
                + "(model name, key, base URL), not the items: fix it and run again")
    }
}
