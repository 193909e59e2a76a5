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

    /// Puts `job` in the deferred queue (its open entry says why now, and since when it waits),
    /// with its run as it now is; decided under the job's lock, so two processes looking at once
    /// never both open an entry.
    @discardableResult
    func deferJob(_ job: String, run: RunRecord?, reasons: String, host: String, at now: Date)
        throws(OffpeakError) -> DeferredRecord
    {
        var record = DeferredRecord(
            id: nil, job: job, runId: run?.id, reasons: reasons, host: host, deferredAt: now, checkedAt: now,
            releasedAt: nil)
        try StoredDate.check(record)
        return try writing { sql throws(OffpeakError) -> DeferredRecord in
            try sql.lock(.job(job))
            if let run { try RunRules.update(run, sql) }
            let open = try sql.rows(
                """
                UPDATE deferred SET reasons = \(reasons), host = \(host), checked_at = \(now),
                    run_id = coalesce(\(run?.id), run_id)
                WHERE id = (SELECT id FROM deferred WHERE job = \(job) AND released_at IS NULL ORDER BY id LIMIT 1)
                RETURNING \(unescaped: Self.deferredColumns)
                """)
            if let row = open.first { return try Self.deferredRecord(row) }
            let inserted = try sql.rows(
                """
                INSERT INTO deferred (job, run_id, reasons, host, deferred_at, checked_at)
                VALUES (\(job), \(run?.id), \(reasons), \(host), \(now), \(now)) RETURNING id
                """)
            record.id = try inserted.first.map { row throws(OffpeakError) in
                Int64(try row("id", as: Int.self))
            }
            return record
        }
    }

    func deferred() throws(OffpeakError) -> [DeferredRecord] {
        try rows(
            """
            SELECT \(unescaped: Self.deferredColumns) FROM deferred
            WHERE released_at IS NULL ORDER BY deferred_at, id
            """
        ).map(Self.deferredRecord)
    }

    private static var deferredColumns: String {
        "id, job, run_id, reasons, host, deferred_at, checked_at, released_at"
    }

    private static func deferredRecord(_ row: any SQLRow) throws(OffpeakError) -> DeferredRecord {
        DeferredRecord(
            id: Int64(try row("id", as: Int.self)), job: try row("job"), runId: try row("run_id"),
            reasons: try row("reasons"), host: try row("host"), deferredAt: try row("deferred_at"),
            checkedAt: try row("checked_at"), releasedAt: try row("released_at"))
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
