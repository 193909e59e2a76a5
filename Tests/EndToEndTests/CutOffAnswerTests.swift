import Foundation
import OffpeakTestSupport
import Testing

/// An answer cut off at `max_tokens` (issue 46, item 8): it was paid for, so it is kept as it came,
/// marked in index.json, in the run's line and in `status`, and the run completes; a rerun is
/// answered from the cache with no call, until the spec changes or `--refresh` asks again.
@Suite(.ownThreads) struct CutOffAnswerTests {
    static func workspace(on sim: SimProcess) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.writeDocuments(3)
        try spec(workspace, maxTokens: 5)
        return workspace
    }

    static func spec(_ workspace: TemporaryWorkspace, maxTokens: Int) throws {
        try workspace.write(
            "jobs/notes.yaml",
            "kind: summarize\ninputs: [docs/*.md]\nmax_tokens: \(maxTokens)\nbatching: off\n")
    }

    static func calls(_ sim: SimProcess) throws -> Int { try sim.stats()["calls"] as? Int ?? -1 }

    static let cutOff =
        "3 answers cut off, kept as they are and marked in index.json (first: answer cut off at "
        + "max_tokens (5); raise max_tokens in the spec)"

    @Test func aCutOffAnswerIsKeptAndARerunDoesNotBuyItAgain() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(on: sim)
        let first = try workspace.offpeak(["run", "notes"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stdout == """
                job notes: 3 of 3 items answered (3 now); \(Self.cutOff)
                outputs: out/notes/
                cost: $0.000684 for 3 calls, 153 input and 15 output tokens (naive $0.000684, saved $0.00)

                """)
        #expect(try Self.calls(sim) == 3)
        #expect(workspace.read("out/notes/docs-doc-001.md") == "This is document num\n", "kept as it came")
        let index = try #require(
            try JSONSerialization.jsonObject(with: Data((workspace.read("out/notes/index.json") ?? "").utf8))
                as? [String: Any])
        let items = try #require(index["items"] as? [[String: Any]])
        #expect(items.map { $0["cutOff"] as? Bool } == [true, true, true])
        #expect(items.map { $0["state"] as? String } == ["done", "done", "done"])

        // The rerun (a cron tick's) is answered from the cache: no call, the same answers, marked.
        let again = try workspace.offpeak(["run", "notes"])
        #expect(again.status == 0)
        #expect(
            again.stdout == """
                job notes: 3 of 3 items answered (3 now); \(Self.cutOff)
                outputs: out/notes/
                cost: $0.00 for 0 calls, 0 input and 0 output tokens (naive $0.000684, saved $0.000684)

                """)
        #expect(try Self.calls(sim) == 3, "the rerun bought nothing")
        let status =
            try JSONSerialization.jsonObject(
                with: Data(try workspace.offpeak(["status", "--json"]).stdout.utf8)) as? [String: Any]
        let runs = try #require(status?["runs"] as? [[String: Any]])
        #expect(runs.map { $0["state"] as? String } == ["completed", "completed"])
        #expect(runs.map { $0["reason"] as? String } == [Self.cutOff, Self.cutOff])

        // `--refresh` asks again, and so does a spec whose max_tokens the answers fit.
        _ = try workspace.offpeak(["run", "notes", "--refresh"])
        #expect(try Self.calls(sim) == 6)
        try Self.spec(workspace, maxTokens: 200)
        let raised = try workspace.offpeak(["run", "notes"])
        #expect(try Self.calls(sim) == 9)
        #expect(
            raised.stdout == """
                job notes: 3 of 3 items answered (3 now)
                outputs: out/notes/
                cost: $0.001659 for 3 calls, 153 input and 80 output tokens (naive $0.001659, saved $0.00)

                """)
        #expect(workspace.read("out/notes/index.json")?.contains("cutOff") == false)
    }
}
