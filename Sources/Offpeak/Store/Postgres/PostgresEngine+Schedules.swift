import Foundation
import PostgresNIO

/// Schedules, the deferred queue and spool entries not taken, on PostgreSQL, as the SQLite engine
/// keeps them (`Store+Schedules`, `Store+Deferred`, `Store+NotTaken`). A job's deferral and its
/// not-taken entries are decided under the job's advisory lock (`lockJob`), so two processes looking
/// at once never both open a deferral or both report one entry as new.
extension PostgresEngine: ScheduleStore {
    @discardableResult
    func deferJob(_ job: String, run: RunRecord?, reasons: String, host: String, at now: Date)
        throws(OffpeakError) -> DeferredRecord
    {
        try store.transaction { () throws(OffpeakError) -> DeferredRecord in
            try lockJob(job)
            if let run { try updateRow(run) }
            let open = try store.query(
                """
                UPDATE deferred SET reasons = \(reasons), host = \(host), checked_at = \(now),
                    run_id = coalesce(\(run?.id), run_id)
                WHERE id = (SELECT id FROM deferred WHERE job = \(job) AND released_at IS NULL ORDER BY id LIMIT 1)
                RETURNING \(unescaped: Self.deferredColumns)
                """)
            if let row = open.first { return try deferredRecord(row) }
            var record = DeferredRecord(
                id: nil, job: job, runId: run?.id, reasons: reasons, host: host, deferredAt: now,
                checkedAt: now, releasedAt: nil)
            try StoredDate.check(record)
            let inserted = try store.query(
                """
                INSERT INTO deferred (job, run_id, reasons, host, deferred_at, checked_at)
                VALUES (\(job), \(run?.id), \(reasons), \(host), \(now), \(now)) RETURNING id
                """)
            record.id = try inserted.first.map { row throws(OffpeakError) in
                try PostgresColumns(row, store)("id", as: Int64.self)
            }
            return record
        }
    }

    func releaseDeferred(job: String, at now: Date) throws(OffpeakError) {
        try store.query(
            """
            UPDATE deferred SET released_at = \(now), checked_at = \(now)
            WHERE job = \(job) AND released_at IS NULL
            """)
    }

    func deferred() throws(OffpeakError) -> [DeferredRecord] {
        var records: [DeferredRecord] = []
        for row in try store.query(
            """
            SELECT \(unescaped: Self.deferredColumns) FROM deferred WHERE released_at IS NULL
            ORDER BY deferred_at, id
            """)
        {
            records.append(try deferredRecord(row))
        }
        return records
    }

    func noteNotTaken(job: String, found: [String: String], at now: Date) throws(OffpeakError)
        -> [NotTakenRecord]
    {
        // Most looks find what the last one did (nothing, mostly): no write then.
        guard try notTakenMap(job: job) != found else { return [] }
        return try store.transaction { () throws(OffpeakError) -> [NotTakenRecord] in
            try lockJob(job)
            let known = try notTakenMap(job: job)
            let gone = known.filter { found[$0.key] != $0.value }.map(\.key)
            if !gone.isEmpty {
                try store.query(
                    "DELETE FROM spool_not_taken WHERE job = \(job) AND entry = ANY(\(gone)::text[])")
            }
            var fresh: [NotTakenRecord] = []
            for (entry, reason) in found.sorted(by: { $0.key < $1.key }) where known[entry] != reason {
                let record = NotTakenRecord(job: job, entry: entry, reason: reason, noticedAt: now)
                try StoredDate.check(record)
                fresh.append(record)
            }
            if !fresh.isEmpty {
                try store.query(
                    """
                    INSERT INTO spool_not_taken (job, entry, reason, noticed_at)
                    SELECT \(job), entry, reason, \(now)
                    FROM unnest(\(fresh.map(\.entry))::text[], \(fresh.map(\.reason))::text[]) AS f (entry, reason)
                    ON CONFLICT (job, entry) DO UPDATE SET reason = excluded.reason, noticed_at = excluded.noticed_at
                    """)
            }
            return fresh
        }
    }

    func notTaken() throws(OffpeakError) -> [NotTakenRecord] {
        var records: [NotTakenRecord] = []
        for row in try store.query(
            "SELECT job, entry, reason, noticed_at FROM spool_not_taken ORDER BY job, entry")
        {
            let columns = PostgresColumns(row, store)
            records.append(
                NotTakenRecord(
                    job: try columns("job"), entry: try columns("entry"), reason: try columns("reason"),
                    noticedAt: try columns("noticed_at")))
        }
        return records
    }

    func scheduleRecords() throws(OffpeakError) -> [ScheduleRecord] {
        var records: [ScheduleRecord] = []
        for row in try store.query(
            "SELECT job, expression, last_fired_at, next_due_at FROM schedules ORDER BY job")
        {
            records.append(try scheduleRecord(row))
        }
        return records
    }

    func scheduleRecord(job: String) throws(OffpeakError) -> ScheduleRecord? {
        try store.query(
            "SELECT job, expression, last_fired_at, next_due_at FROM schedules WHERE job = \(job)"
        ).first.map { row throws(OffpeakError) in try scheduleRecord(row) }
    }

    func saveSchedules(_ records: [ScheduleRecord]) throws(OffpeakError) {
        guard !records.isEmpty else { return }
        for record in records { try StoredDate.check(record) }
        // Nullable times travel as a value and a flag each: postgres-nio binds no array holding NULL.
        let epoch = Date(timeIntervalSince1970: 0)
        try store.query(
            """
            INSERT INTO schedules (job, expression, last_fired_at, next_due_at)
            SELECT job, expression, CASE WHEN has_fired THEN fired END, CASE WHEN has_due THEN due END
            FROM unnest(\(records.map(\.job))::text[], \(records.map(\.expression))::text[],
                \(records.map { $0.lastFiredAt ?? epoch })::timestamptz[],
                \(records.map { $0.lastFiredAt != nil })::boolean[],
                \(records.map { $0.nextDueAt ?? epoch })::timestamptz[],
                \(records.map { $0.nextDueAt != nil })::boolean[])
                AS s (job, expression, fired, has_fired, due, has_due)
            ON CONFLICT (job) DO UPDATE SET expression = excluded.expression,
                last_fired_at = excluded.last_fired_at, next_due_at = excluded.next_due_at
            """)
    }

    func claimFiring(_ record: ScheduleRecord) throws(OffpeakError) -> Bool {
        guard let at = record.lastFiredAt else { return false }
        try StoredDate.check(record)
        return try !store.query(
            """
            UPDATE schedules SET last_fired_at = \(at), next_due_at = \(record.nextDueAt)
            WHERE job = \(record.job) AND expression = \(record.expression) AND next_due_at <= \(at)
            RETURNING 1
            """
        ).isEmpty
    }

    static let deferredColumns = "id, job, run_id, reasons, host, deferred_at, checked_at, released_at"

    private func deferredRecord(_ row: PostgresRow) throws(OffpeakError) -> DeferredRecord {
        let columns = PostgresColumns(row, store)
        return DeferredRecord(
            id: try columns("id"), job: try columns("job"), runId: try columns("run_id"),
            reasons: try columns("reasons"), host: try columns("host"),
            deferredAt: try columns("deferred_at"),
            checkedAt: try columns("checked_at"), releasedAt: try columns("released_at"))
    }

    private func scheduleRecord(_ row: PostgresRow) throws(OffpeakError) -> ScheduleRecord {
        let columns = PostgresColumns(row, store)
        return ScheduleRecord(
            job: try columns("job"), expression: try columns("expression"),
            lastFiredAt: try columns("last_fired_at"), nextDueAt: try columns("next_due_at"))
    }

    /// The job's not-taken entries: entry → reason.
    private func notTakenMap(job: String) throws(OffpeakError) -> [String: String] {
        var entries: [String: String] = [:]
        for row in try store.query("SELECT entry, reason FROM spool_not_taken WHERE job = \(job)") {
            let columns = PostgresColumns(row, store)
            entries[try columns("entry")] = try columns("reason")
        }
        return entries
    }
}
