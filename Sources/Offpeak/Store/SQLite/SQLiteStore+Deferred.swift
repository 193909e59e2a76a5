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
}
