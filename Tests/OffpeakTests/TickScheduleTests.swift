import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `tick` and schedules: a due job runs once, however many slots were missed.
@Suite(.ownThreads) struct TickScheduleTests {
    @Test func missedSlotsFireOnceAtTheNextTick() throws {
        let sim = try SimProcess()
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: 2)
        try workspace.write(
            "jobs/docs.yaml",
            """
            kind: summarize
            inputs: [docs/*.md]
            batching: off
            schedule: "*/10 * * * *"
            timezone: UTC
            """)
        let context = try JobRunnerIntegrationTests.context(workspace)
        let tick = Tick(context: context)
        // A minute past a slot, so the ticks below (start + 1 h, + 1 h 30 s) fall between two slots
        // whatever the clock says.
        let slot = (Date().timeIntervalSince1970 / 600).rounded(.down) * 600
        let start = Date(timeIntervalSince1970: slot + 60)
        // First sight: registered, not due.
        let first = try tick.run(Tick.Options(now: start))
        #expect(first.jobs.isEmpty, "\(first.text)")
        // The machine was off for an hour: six slots passed; the job runs once.
        let late = try tick.run(Tick.Options(now: start + 3600))
        #expect(late.jobs.map(\.why) == ["schedule"], "\(late.text)")
        #expect(late.jobs.first?.state == "completed")
        let again = try tick.run(Tick.Options(now: start + 3600 + 30))
        #expect(again.jobs.isEmpty, "not again before the next slot: \(again.text)")
        #expect((try sim.stats()["calls"] as? Int) == 2)
        let entry = try #require(try ScheduleBook(store: context.openStore()).entries().first)
        let next = try #require(entry.nextDueAt)
        #expect(next > start + 3600 && next <= start + 3600 + 600)
    }

    /// `offpeak summarize` has no spec file: tick resumes its run from the spec the run kept. A job
    /// whose file was removed is not resumed.
    @Test func tickResumesASummarizeRunFromItsStoredSpecButNotARemovedJob() throws {
        let sim = try SimProcess()
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: 3)
        try workspace.oneCallInFlight()  // a sequential premise (see `oneCallInFlight`)
        let context = try JobRunnerIntegrationTests.context(workspace)
        let spec = try JobSpec.summarize(
            files: ["docs/doc-001.md", "docs/doc-002.md", "docs/doc-003.md"], tier: .fast, output: nil,
            maxTokens: 200, workspace: context.workspace)
        let stop = StopSignal()
        let first = try context.run(
            spec,
            options: JobRunner.Options(
                progress: { if $0.done == 1 { stop.request("SIGTERM", grace: 0) } }, stop: stop))
        #expect(first.run.state == .interrupted)
        // The job file's run: interrupted, then its file is removed.
        let other = StopSignal()
        let docs = try context.run(
            try context.loadJob("docs"),
            options: JobRunner.Options(
                progress: { if $0.done == 1 { other.request("SIGTERM", grace: 0) } }, stop: other))
        #expect(docs.run.state == .interrupted)
        #expect(docs.run.itemsDone == 1)
        try FileManager.default.removeItem(at: workspace.root.appendingPathComponent("jobs/docs.yaml"))
        let tick = try Tick(context: context).run(Tick.Options())
        #expect(tick.jobs.map(\.job) == ["summarize"], "\(tick.text)")
        #expect(tick.status == 0, "\(tick.text)")
        let store = try context.openStore()
        #expect(try store.runs.run(id: first.run.id)?.state == .completed)
        #expect(try store.runs.run(id: docs.run.id)?.state == .interrupted, "a removed job is left alone")
        #expect(workspace.read("out/summarize/docs-doc-003.md") != nil)
    }

    /// Only a tick's first call starts whatever the window says: a second job whose call does not
    /// fit what the first left of the window waits for the next tick instead of overrunning it.
    @Test func onlyTheTicksFirstCallStartsPastTheWindow() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "400"])
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: 3)
        for (job, document) in [("seed", 1), ("a", 2), ("b", 3)] {
            try workspace.write(
                "jobs/\(job).yaml",
                "kind: summarize\ninputs: [docs/doc-00\(document).md]\nbatching: off\nmax_tokens: 200\n")
        }
        let context = try JobRunnerIntegrationTests.context(workspace)
        // One measured call, so the window knows what a call of this model takes (about 0.4 s).
        #expect(try context.run(try context.loadJob("seed")).run.state == .completed)
        // Runs of a and b that stopped before their first call: the tick resumes them, a first.
        for job in ["a", "b"] {
            let stop = StopSignal()
            stop.request("SIGTERM", grace: 0)
            let outcome = try context.run(try context.loadJob(job), options: JobRunner.Options(stop: stop))
            #expect(outcome.run.state == .interrupted && outcome.callsMade == 0)
        }
        let tick = try Tick(context: context).run(Tick.Options(window: 0.7))
        #expect(tick.jobs.map(\.job) == ["a", "b"], "\(tick.text)")
        #expect(tick.jobs.first?.state == "completed", "a's call is the tick's first: \(tick.text)")
        #expect(tick.jobs.last?.state != "completed", "b's call would not fit: \(tick.text)")
        #expect(tick.status == ExitStatus.temporaryFailure.rawValue)
        #expect((try sim.stats()["calls"] as? Int) == 2, "seed and a only")
        let next = try Tick(context: context).run(Tick.Options(window: 0.7))
        #expect(next.jobs.map(\.job) == ["b"] && next.status == 0, "\(next.text)")
        #expect((try sim.stats()["calls"] as? Int) == 3)
    }
}
