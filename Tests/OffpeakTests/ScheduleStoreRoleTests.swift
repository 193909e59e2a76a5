import Foundation
import Testing

@testable import Offpeak

/// `ScheduleStore`, the same scenarios on both engines (`StoreEngine`): schedules, the deferred
/// queue and spool entries not taken.
struct ScheduleStoreRoleTests {
    typealias F = RoleFixtures

    @Test(arguments: StoreEngine.allCases)
    func schedulesAreSavedReplacedAndReadByJob(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let nightly = ScheduleRecord(
            job: "nightly", expression: "0 2 * * * TZ=UTC", lastFiredAt: nil, nextDueAt: F.t0)
        let hourly = ScheduleRecord(
            job: "hourly", expression: "0 * * * *", lastFiredAt: F.t0 - 3600, nextDueAt: F.t0 + 3600)
        try roles.schedules.saveSchedules([nightly, hourly])
        #expect(try roles.schedules.scheduleRecords() == [hourly, nightly])
        // Replaced whole: a time set, a time cleared, the expression changed.
        var fired = nightly
        fired.lastFiredAt = F.t0
        fired.nextDueAt = nil
        fired.expression = "30 2 * * * TZ=UTC"
        try roles.schedules.saveSchedules([fired])
        #expect(try roles.schedules.scheduleRecord(job: "nightly") == fired)
        #expect(try roles.schedules.scheduleRecord(job: "hourly") == hourly)
        #expect(try roles.schedules.scheduleRecord(job: "weekly") == nil)
        try roles.schedules.saveSchedules([])
        #expect(try roles.schedules.scheduleRecords() == [hourly, fired])
    }

    /// Two processes (hosts) that both saw a slot due: the first to record its firing runs it; the
    /// other's claim fails, however close behind, and a later slot is claimed again.
    @Test(arguments: StoreEngine.allCases)
    func aSlotSeenDueByTwoHostsIsFiredByOne(engine: StoreEngine) throws {
        let first = try engine.roles()
        let second = try first.another()
        let key = "0 * * * * TZ=UTC"
        try first.schedules.saveSchedules([
            ScheduleRecord(job: "hourly", expression: key, lastFiredAt: nil, nextDueAt: F.t0)
        ])
        let firing = { (at: Date) in
            ScheduleRecord(job: "hourly", expression: key, lastFiredAt: at, nextDueAt: F.t0 + 3600)
        }
        #expect(try first.schedules.claimFiring(firing(F.t0 + 5)))
        #expect(try !second.schedules.claimFiring(firing(F.t0 + 6)), "fired already")
        #expect(try second.schedules.scheduleRecord(job: "hourly") == firing(F.t0 + 5))
        // Not due yet, or under another expression: nothing is claimed.
        #expect(try !second.schedules.claimFiring(firing(F.t0 + 3599)))
        let other = ScheduleRecord(
            job: "hourly", expression: "30 * * * * TZ=UTC", lastFiredAt: F.t0 + 3600, nextDueAt: F.t0 + 5400)
        #expect(try !second.schedules.claimFiring(other))
        #expect(
            try !second.schedules.claimFiring(
                ScheduleRecord(job: "unknown", expression: key, lastFiredAt: F.t0, nextDueAt: nil)))
        // The next slot goes to whoever records it first.
        let next = ScheduleRecord(job: "hourly", expression: key, lastFiredAt: F.t0 + 3600, nextDueAt: nil)
        #expect(try second.schedules.claimFiring(next))
        #expect(try !first.schedules.claimFiring(next))
        #expect(try first.schedules.scheduleRecord(job: "hourly") == next)
    }

    /// A deferral keeps its first time; its reasons and host are those of the last host to defer
    /// the job (issue 23, item 4: each host reads its own conditions).
    @Test(arguments: StoreEngine.allCases)
    func aDeferralKeepsItsFirstTimeUntilReleasedAndMovesItsRun(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1", job: "j"), requests: [])
        let first = try roles.schedules.deferJob(
            "j", run: nil, reasons: "on battery", host: "laptop", at: F.t0)
        #expect(first.deferredAt == F.t0 && first.runId == nil && first.id != nil && first.host == "laptop")
        var run = try #require(try roles.runs.run(id: "r1"))
        try run.move(to: .waiting, reason: "on battery; metered", at: F.t0 + 60)
        let again = try roles.schedules.deferJob(
            "j", run: run, reasons: "on battery; metered", host: "tablet", at: F.t0 + 60)
        #expect(again.id == first.id)
        #expect(again.deferredAt == F.t0 && again.checkedAt == F.t0 + 60 && again.runId == "r1")
        #expect(again.reasonList == ["on battery", "metered"] && again.host == "tablet")
        #expect(try roles.runs.run(id: "r1")?.state == .waiting)
        _ = try roles.schedules.deferJob("other", run: nil, reasons: "metered", host: "laptop", at: F.t0 + 30)
        #expect(try roles.schedules.deferred().map(\.job) == ["j", "other"])
        #expect(try roles.schedules.deferred().map(\.host) == ["tablet", "laptop"])
        #expect(try roles.schedules.deferred().first == again)

        try roles.schedules.releaseDeferred(job: "j", at: F.t0 + 120)
        #expect(try roles.schedules.deferred().map(\.job) == ["other"])
        // Deferred again after its release: a new deferral, from now.
        let later = try roles.schedules.deferJob(
            "j", run: nil, reasons: "on battery", host: "laptop", at: F.t0 + 180)
        #expect(later.id != first.id && later.deferredAt == F.t0 + 180 && later.runId == nil)
        #expect(try roles.schedules.deferred().map(\.job) == ["other", "j"])
    }

    @Test(arguments: StoreEngine.allCases)
    func spoolEntriesNotTakenAreReportedOnceAndGoWhenTheEntryDoes(engine: StoreEngine) throws {
        let roles = try engine.roles()
        let folder = "a folder; offpeak takes only regular files"
        let pipe = "a named pipe; offpeak takes only regular files"
        let first = try roles.schedules.noteNotTaken(
            job: "q", found: ["spool/q/b": folder, "spool/q/a": pipe], at: F.t0)
        #expect(first.map(\.entry) == ["spool/q/a", "spool/q/b"])
        #expect(first.allSatisfy { $0.noticedAt == F.t0 && $0.job == "q" })
        // The same look again: nothing new.
        #expect(
            try roles.schedules.noteNotTaken(
                job: "q", found: ["spool/q/b": folder, "spool/q/a": pipe], at: F.t0 + 60
            ).isEmpty)
        // One entry's reason changed, one went, one came; another job's entries are its own.
        _ = try roles.schedules.noteNotTaken(job: "r", found: ["spool/r/x": folder], at: F.t0)
        let next = try roles.schedules.noteNotTaken(
            job: "q", found: ["spool/q/b": pipe, "spool/q/c": folder], at: F.t0 + 120)
        #expect(next.map(\.entry) == ["spool/q/b", "spool/q/c"])
        #expect(next.map(\.reason) == [pipe, folder])
        let all = try roles.schedules.notTaken()
        #expect(all.map { "\($0.job) \($0.entry)" } == ["q spool/q/b", "q spool/q/c", "r spool/r/x"])
        #expect(all.map(\.noticedAt) == [F.t0 + 120, F.t0 + 120, F.t0])
        // Everything taken or gone: the job's rows go.
        #expect(try roles.schedules.noteNotTaken(job: "q", found: [:], at: F.t0 + 180).isEmpty)
        #expect(try roles.schedules.notTaken().map(\.job) == ["r"])
    }
}
