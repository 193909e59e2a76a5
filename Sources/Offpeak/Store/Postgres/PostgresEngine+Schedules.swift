import Foundation
import PostgresNIO

/// A job's deferral on PostgreSQL, as the SQLite engine makes it (`SQLiteStore+Deferred`), decided
/// under the job's advisory lock (`lockJob`), so two processes looking at once never both open one.
/// The rest of the role is written once, above both engines (`ScheduleStore+SQL`).
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

    static let deferredColumns = "id, job, run_id, reasons, host, deferred_at, checked_at, released_at"

    private func deferredRecord(_ row: PostgresRow) throws(OffpeakError) -> DeferredRecord {
        let columns = PostgresColumns(row, store)
        return DeferredRecord(
            id: try columns("id"), job: try columns("job"), runId: try columns("run_id"),
            reasons: try columns("reasons"), host: try columns("host"),
            deferredAt: try columns("deferred_at"),
            checkedAt: try columns("checked_at"), releasedAt: try columns("released_at"))
    }
}
