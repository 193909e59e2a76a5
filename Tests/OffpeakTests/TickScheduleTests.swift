import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `tick` and schedules: a due job runs once, however many slots were missed.
struct TickScheduleTests {
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
        let start = Date()
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
}
