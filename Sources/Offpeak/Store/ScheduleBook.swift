import Foundation

/// One scheduled job, for reports.
struct ScheduleEntry: Sendable, Equatable, Codable {
    var job: String
    /// The cron expression as the spec gives it.
    var expression: String
    /// The zone it is read in (the spec's `timezone`, else the local zone when last seen).
    var timezone: String?
    var lastFiredAt: Date?
    /// `nil` when the expression never fires.
    var nextDueAt: Date?
}

/// Which scheduled jobs are due: what `offpeak tick` asks on every tick.
///
/// The store keeps, per job, the expression it was last seen with and when it is next due. A job
/// missed while the machine was off is due once at the next tick, never once per missed slot
/// (like systemd's `Persistent=true`), because firing moves `next_due_at` past the firing time.
struct ScheduleBook: Sendable {
    let store: Store

    init(store: Store) {
        self.store = store
    }

    /// Jobs (from `specs`, those with a `schedule`) due at `now`. A job seen for the first time is
    /// recorded with next_due_at = next fire after now and is not due. A job is due when
    /// now >= next_due_at; missed slots (machine off) make it due ONCE, never once per slot. If the
    /// expression or timezone changed since recorded, recompute next_due_at from now.
    /// - Throws: `OffpeakError` when the store fails or a spec's schedule or timezone is invalid.
    func due(_ specs: [JobSpec], now: Date) throws(OffpeakError) -> [JobSpec] {
        let known = Dictionary(
            try store.schedules.scheduleRecords().map { ($0.job, $0) },
            uniquingKeysWith: { first, _ in first })
        var due: [JobSpec] = []
        var changed: [ScheduleRecord] = []
        for spec in specs {
            guard let (expression, timeZone) = try Self.schedule(of: spec) else { continue }
            let key = Self.key(expression, spec: spec)
            guard let record = known[spec.name], record.expression == key else {
                changed.append(
                    ScheduleRecord(
                        job: spec.name, expression: key, lastFiredAt: known[spec.name]?.lastFiredAt,
                        nextDueAt: expression.next(after: now, in: timeZone)))
                continue
            }
            if let nextDue = record.nextDueAt, now >= nextDue { due.append(spec) }
        }
        try store.schedules.saveSchedules(changed)
        return due
    }

    /// Records that the job fired at `at` (last_fired_at = at, next_due_at = next fire strictly
    /// after `at`), if no other process or host fired its slot first (`ScheduleStore.claimFiring`).
    /// - Returns: whether this process fired it, and so runs it.
    @discardableResult
    func fired(_ spec: JobSpec, at: Date) throws(OffpeakError) -> Bool {
        guard let (expression, timeZone) = try Self.schedule(of: spec) else {
            throw OffpeakError(.software, "job '\(spec.name)' has no schedule to record a firing of")
        }
        return try store.schedules.claimFiring(
            ScheduleRecord(
                job: spec.name, expression: Self.key(expression, spec: spec),
                lastFiredAt: at, nextDueAt: expression.next(after: at, in: timeZone)))
    }

    /// For reports: (job, expression, lastFiredAt, nextDueAt) rows, by job name.
    func entries() throws(OffpeakError) -> [ScheduleEntry] {
        try store.schedules.scheduleRecords().map { record in
            ScheduleEntry(
                job: record.job, expression: record.cron, timezone: record.timeZone,
                lastFiredAt: record.lastFiredAt, nextDueAt: record.nextDueAt)
        }
    }

    /// What the store keeps to notice a change: the expression and the zone's name as the spec gives
    /// it, else the local zone's.
    static func key(_ expression: CronExpression, spec: JobSpec) -> String {
        ScheduleRecord.key(expression.text, timeZone: spec.timezone ?? TimeZone.current.identifier)
    }

    /// The spec's parsed schedule and zone (`timezone`, else the local zone), or `nil` without one.
    static func schedule(of spec: JobSpec) throws(OffpeakError) -> (CronExpression, TimeZone)? {
        guard let text = spec.schedule else { return nil }
        let location = spec.sourcePath
        let expression: CronExpression
        do {
            expression = try CronExpression(text)
        } catch {
            throw OffpeakError(.dataError, "schedule: \(error)", location: location)
        }
        guard let name = spec.timezone else { return (expression, TimeZone.current) }
        guard let timeZone = TimeZone(identifier: name) else {
            throw OffpeakError(
                .dataError, "timezone: expected a time zone name like Europe/Berlin, got '\(name)'",
                location: location)
        }
        return (expression, timeZone)
    }
}
