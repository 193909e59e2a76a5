import Foundation
import OffpeakTestSupport
import Testing

/// In the batch lane a call's latency does not matter, so a job that does not set
/// `batching.max_items` packs up to 100 items a prompt there (the live default is 8); one that
/// sets it gets what it asked for. The built `offpeak` against `offpeak-sim`'s Message Batches,
/// with the batch audit off (its requests would travel in the same batches).
@Suite(.ownThreads, .serialized) struct BatchLanePackingTests {
    /// A `classify` job of 30 tickets under a system prompt long enough to be worth sharing.
    static func workspace(_ sim: SimProcess, batching: String) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        let examples = (0..<40).map { "Ticket: my order \($0) never arrived. Label: billing" }
        let items = (0..<30).map { "  - {id: t\($0), text: 'ticket \($0): my invoice \($0 % 7) is wrong'}" }
        try workspace.write(
            "jobs/classify.yaml",
            """
            kind: prompt
            system: "Classify the support ticket as billing, bug or other. \(examples.joined(separator: " "))"
            template: "{{text}}"
            max_tokens: 20
            lane: batch
            audit: off
            \(batching)
            items:
            \(items.joined(separator: "\n"))

            """)
        return workspace
    }

    /// Provider requests the sim's batches answered, and the items in the job's outputs.
    static func outcome(_ sim: SimProcess, _ workspace: TemporaryWorkspace) throws -> (
        requests: Int, answers: Int
    ) {
        let batches = try #require(sim.stats()["batches"] as? [String: Double])
        let answers = workspace.snapshot("out/classify").filter { $0.key != "index.json" }
        return (Int(batches["succeeded"] ?? 0), answers.count)
    }

    @Test func withoutMaxItemsTheBatchLanePacksEveryTicketIntoOnePrompt() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "0"])
        let workspace = try Self.workspace(sim, batching: "")
        let run = try workspace.offpeak(["run", "classify", "--wait"])
        #expect(run.status == 0, "\(run.stderr)")
        let outcome = try Self.outcome(sim, workspace)
        #expect(outcome.requests == 1 && outcome.answers == 30)
    }

    @Test func maxItemsSetInTheSpecIsKeptInTheBatchLane() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "0"])
        let workspace = try Self.workspace(sim, batching: "batching: {max_items: 8}")
        let run = try workspace.offpeak(["run", "classify", "--wait"])
        #expect(run.status == 0, "\(run.stderr)")
        let outcome = try Self.outcome(sim, workspace)
        #expect(outcome.requests == 4 && outcome.answers == 30)
    }
}
