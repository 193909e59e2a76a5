import Foundation

/// Schedules, the deferred queue and the spool entries intake does not take, decided once for both
/// engines (`SQLEngine`). A schedule fires once however many hosts tick (`claimFiring`: one
/// conditional update); a job's not-taken entries are decided under the job's lock, so two ticks
/// looking at one folder report each entry once.
extension ScheduleStore where Self: SQLEngine {
    func releaseDeferred(job: String, at now: Date) throws(OffpeakError) {
        try execute(
            """
            UPDATE deferred SET released_at = \(now), checked_at = \(now)
            WHERE job = \(job) AND released_at IS NULL
            """)
    }

    func deferred() throws(OffpeakError) -> [DeferredRecord] {
        try rows(
            """
            SELECT id, job, run_id, reasons, host, deferred_at, checked_at, released_at FROM deferred
            WHERE released_at IS NULL ORDER BY deferred_at, id
            """
        ).map { row throws(OffpeakError) -> DeferredRecord in
            DeferredRecord(
                id: Int64(try row("id", as: Int.self)), job: try row("job"), runId: try row("run_id"),
                reasons: try row("reasons"), host: try row("host"), deferredAt: try row("deferred_at"),
                checkedAt: try row("checked_at"), releasedAt: try row("released_at"))
        }
    }

    func scheduleRecords() throws(OffpeakError) -> [ScheduleRecord] {
        try rows("SELECT job, expression, last_fired_at, next_due_at FROM schedules ORDER BY job").map(
            Self.schedule)
    }

    func scheduleRecord(job: String) throws(OffpeakError) -> ScheduleRecord? {
        try rows("SELECT job, expression, last_fired_at, next_due_at FROM schedules WHERE job = \(job)").first
            .map(Self.schedule)
    }

    func saveSchedules(_ records: [ScheduleRecord]) throws(OffpeakError) {
        guard !records.isEmpty else { return }
        for record in records { try StoredDate.check(record) }
        try writing { sql throws(OffpeakError) in
            for record in records {
                try sql.execute(
                    """
                    INSERT INTO schedules (job, expression, last_fired_at, next_due_at)
                    VALUES (\(record.job), \(record.expression), \(record.lastFiredAt), \(record.nextDueAt))
                    ON CONFLICT (job) DO UPDATE SET expression = excluded.expression,
                        last_fired_at = excluded.last_fired_at, next_due_at = excluded.next_due_at
                    """)
            }
        }
    }

    func claimFiring(_ record: ScheduleRecord) throws(OffpeakError) -> Bool {
        guard let at = record.lastFiredAt else { return false }
        try StoredDate.check(record)
        return try execute(
            """
            UPDATE schedules SET last_fired_at = \(at), next_due_at = \(record.nextDueAt)
            WHERE job = \(record.job) AND expression = \(record.expression) AND next_due_at <= \(at)
            """) == 1
    }

    func noteNotTaken(job: String, found: [String: String], at now: Date) throws(OffpeakError)
        -> [NotTakenRecord]
    {
        // Most looks find what the last one did (nothing, mostly): no write then.
        guard try Self.notTaken(job: job, self.rows) != found else { return [] }
        return try writing { sql throws(OffpeakError) -> [NotTakenRecord] in
            try sql.lock(.job(job))
            let known = try Self.notTaken(job: job, sql.rows)
            let gone = known.filter { found[$0.key] != $0.value }.map(\.key)
            if !gone.isEmpty {
                try sql.execute("DELETE FROM spool_not_taken WHERE job = \(job) AND entry IN \(list: gone)")
            }
            var fresh: [NotTakenRecord] = []
            for (entry, reason) in found.sorted(by: { $0.key < $1.key }) where known[entry] != reason {
                let record = NotTakenRecord(job: job, entry: entry, reason: reason, noticedAt: now)
                try StoredDate.check(record)
                try sql.execute(
                    """
                    INSERT INTO spool_not_taken (job, entry, reason, noticed_at) VALUES (\(job), \(entry), \(reason), \(now))
                    ON CONFLICT (job, entry) DO UPDATE SET reason = excluded.reason, noticed_at = excluded.noticed_at
                    """)
                fresh.append(record)
            }
            return fresh
        }
    }

    func notTaken() throws(OffpeakError) -> [NotTakenRecord] {
        try rows("SELECT job, entry, reason, noticed_at FROM spool_not_taken ORDER BY job, entry").map {
            row throws(OffpeakError) -> NotTakenRecord in
            NotTakenRecord(
                job: try row("job"), entry: try row("entry"), reason: try row("reason"),
                noticedAt: try row("noticed_at"))
        }
    }

    private static func schedule(_ row: any SQLRow) throws(OffpeakError) -> ScheduleRecord {
        ScheduleRecord(
            job: try row("job"), expression: try row("expression"), lastFiredAt: try row("last_fired_at"),
            nextDueAt: try row("next_due_at"))
    }

    /// The job's entries not taken, each with why.
    private static func notTaken(
        job: String, _ rows: (SQLStatement) throws(OffpeakError) -> [any SQLRow]
    ) throws(OffpeakError) -> [String: String] {
        var entries: [String: String] = [:]
        for row in try rows("SELECT entry, reason FROM spool_not_taken WHERE job = \(job)") {
            entries[try row("entry")] = try row("reason")
        }
        return entries
    }
}
