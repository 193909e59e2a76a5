import Foundation
import GRDB

/// The deferred queue: jobs that wait for their conditions, with why and since when.
extension SQLiteStore {
    @discardableResult
    func deferJob(_ job: String, run: RunRecord?, reasons: String, host: String, at now: Date)
        throws(OffpeakError) -> DeferredRecord
    {
        try write { db in
            if let run { try run.update(db) }
            if var open = try DeferredRecord.filter(Column("job") == job && Column("released_at") == nil)
                .fetchOne(db)
            {
                open.reasons = reasons
                open.host = host
                open.checkedAt = now
                open.runId = run?.id ?? open.runId
                try open.update(db)
                return open
            }
            var record = DeferredRecord(
                id: nil, job: job, runId: run?.id, reasons: reasons, host: host, deferredAt: now,
                checkedAt: now, releasedAt: nil)
            try record.insert(db)
            return record
        }
    }

    func releaseDeferred(job: String, at now: Date) throws(OffpeakError) {
        try write { db in
            try db.execute(
                sql:
                    "UPDATE deferred SET released_at = ?, checked_at = ? WHERE job = ? AND released_at IS NULL",
                arguments: [now, now, job])
        }
    }

    func deferred() throws(OffpeakError) -> [DeferredRecord] {
        try read { db in
            try DeferredRecord.filter(Column("released_at") == nil).order(Column("deferred_at"), Column("id"))
                .fetchAll(db)
        }
    }
}

extension SQLiteStore {
    func retryingRequests() throws(OffpeakError) -> [RequestRecord] {
        try read { db in
            try StoredPayload.expand(
                RequestRecord.fetchAll(
                    db,
                    sql:
                        "SELECT * FROM requests WHERE state = \(SQLStates.request(.retrying)) ORDER BY next_attempt_at"
                ), db)
        }
    }
}
