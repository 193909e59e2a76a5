import Foundation

/// Schedules and the deferred queue: when each job last fired, jobs waiting for their conditions, and entries a spool folder could not take.
///
/// One role of the store seam (`Store`), played by both engines: SQLite (`SQLiteStore`) and
/// PostgreSQL (`PostgresEngine`).
protocol ScheduleStore: AnyObject, Sendable {
    /// Defers `job` (and its run) for `reasons`, read on `host`. A job already deferred keeps its
    /// first deferral time; its reasons, host and check time are brought up to date. The run, if
    /// given, moves to `waiting` in the same transaction.
    @discardableResult
    func deferJob(_ job: String, run: RunRecord?, reasons: String, host: String, at now: Date)
        throws(OffpeakError) -> DeferredRecord

    /// Releases the job's open deferral: its conditions hold now (or the user forced it).
    func releaseDeferred(job: String, at now: Date) throws(OffpeakError)

    /// Open deferrals, oldest first.
    func deferred() throws(OffpeakError) -> [DeferredRecord]

    /// Brings the job's not-taken entries up to date with a look at its spool folder: entries in
    /// `found` are kept (or added, with `now`), every other row of the job goes.
    /// - Parameter found: entry → reason, everything the look found that it does not take.
    /// - Returns: the entries new since the last look (or whose reason changed), to report once.
    func noteNotTaken(job: String, found: [String: String], at now: Date) throws(OffpeakError)
        -> [NotTakenRecord]

    /// Every spool entry not taken, by job and entry.
    func notTaken() throws(OffpeakError) -> [NotTakenRecord]

    /// Every job's schedule row, by job name.
    func scheduleRecords() throws(OffpeakError) -> [ScheduleRecord]

    /// One job's schedule row, if the job was ever seen with a schedule.
    func scheduleRecord(job: String) throws(OffpeakError) -> ScheduleRecord?

    /// Inserts or replaces `records`, all in one transaction.
    func saveSchedules(_ records: [ScheduleRecord]) throws(OffpeakError)

    /// Records that the job fired (`record`: fired at `lastFiredAt`, next due at `nextDueAt`) if
    /// its slot is still due then: its row still has `record.expression` and a `next_due_at` at or
    /// before the firing. A process or host that fired the slot first moved it past, and this one
    /// does not fire it: a slot fires once across every host ticking the store.
    /// - Returns: whether this process fired the slot.
    func claimFiring(_ record: ScheduleRecord) throws(OffpeakError) -> Bool
}
