import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// No command drops pending work the user did not cancel (issue 10, item 18): `summarize` keeps
/// the unfinished items of earlier invocations, and a spec edited under an unfinished run says
/// what it dropped.
@Suite(.ownThreads) struct PendingWorkTests {
    static func summarize(
        _ files: [String], in workspace: TemporaryWorkspace, stopAfter answers: Int? = nil
    ) throws -> RunOutcome {
        let context = try JobRunnerIntegrationTests.context(workspace)
        let spec = try JobSpec.summarize(
            files: files, tier: .fast, output: nil, maxTokens: 200, workspace: context.workspace)
        let stop = StopSignal()
        let options = JobRunner.Options(
            progress: { progress in
                if let answers, progress.done >= answers { stop.request("test", grace: 0) }
            }, stop: stop)
        return try context.run(spec, options: options)
    }

    @Test func summarizingMoreFilesKeepsTheUnfinishedOnes() throws {
        let sim = try SimProcess()
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: 4)
        try workspace.oneCallInFlight()  // a sequential premise (see `oneCallInFlight`)
        let first = try Self.summarize(
            ["docs/doc-001.md", "docs/doc-002.md", "docs/doc-003.md"], in: workspace, stopAfter: 1)
        #expect(first.status == .temporaryFailure)
        #expect(first.run.itemsDone == 1)

        let second = try Self.summarize(["docs/doc-004.md"], in: workspace)
        #expect(second.status == .ok)
        #expect(second.run.id == first.run.id)
        #expect(second.message == "job summarize: 4 of 4 items answered (3 now)")
        let index = try #require(workspace.read("out/summarize/index.json"))
        for id in 1...4 { #expect(index.contains("\"id\" : \"docs/doc-00\(id).md\"")) }
        #expect(try sim.stats()["calls"] as? Int == 4, "each document asked once")
    }

    @Test func namingAFileAgainReadsItAnew() throws {
        let sim = try SimProcess()
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: 2)
        try workspace.oneCallInFlight()  // a sequential premise (see `oneCallInFlight`)
        _ = try Self.summarize(["docs/doc-001.md", "docs/doc-002.md"], in: workspace, stopAfter: 1)
        try workspace.write("docs/doc-002.md", "# Changed\n\nThe second document now says something else.\n")
        let second = try Self.summarize(["docs/doc-002.md"], in: workspace)
        #expect(second.message == "job summarize: 2 of 2 items answered (1 now)")
        #expect(workspace.read("out/summarize/docs-doc-002.md")?.contains("something else") == true)
    }

    @Test func aSpecEditedUnderAnUnfinishedRunSaysWhatItDropped() throws {
        let sim = try SimProcess()
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: 1)
        let spec = "kind: prompt\ntemplate: \"{{item}}\"\nbatching: off\n"
        try workspace.write("jobs/q.yaml", spec + "budget: {max_calls: 1}\nitems: [a, b, c, d]\n")
        let first = try JobRunnerIntegrationTests.run(workspace, job: "q")
        #expect(first.run.itemsDone == 1)
        try workspace.write("jobs/q.yaml", spec + "items: [a, b]\n")
        let second = try JobRunnerIntegrationTests.run(workspace, job: "q")
        #expect(
            second.message
                == "jobs/q.yaml changed while its run was unfinished: dropped 2 unanswered items it no "
                + "longer lists (3, 4); job q: 2 of 2 items answered (1 now)")
    }

    @Test func oneItemIsOneItem() throws {
        let sim = try SimProcess()
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: 1)
        let outcome = try JobRunnerIntegrationTests.run(workspace)
        #expect(outcome.message == "job docs: 1 of 1 item answered (1 now)")
    }
}
