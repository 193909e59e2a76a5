import Foundation
import GRDB

extension SQLiteStore {
    func scheduleRecords() throws(OffpeakError) -> [ScheduleRecord] {
        try read { db in try ScheduleRecord.order(Column("job")).fetchAll(db) }
    }

    func scheduleRecord(job: String) throws(OffpeakError) -> ScheduleRecord? {
        try read { db in try ScheduleRecord.fetchOne(db, key: job) }
    }

    func saveSchedules(_ records: [ScheduleRecord]) throws(OffpeakError) {
        guard !records.isEmpty else { return }
        try write { db in
            for record in records { try record.save(db) }
        }
    }

    func claimFiring(_ record: ScheduleRecord) throws(OffpeakError) -> Bool {
        guard let at = record.lastFiredAt else { return false }
        return try write { db in
            try db.execute(
                sql: """
                    UPDATE schedules SET last_fired_at = ?, next_due_at = ?
                    WHERE job = ? AND expression = ? AND next_due_at <= ?
                    """,
                arguments: [at, record.nextDueAt, record.job, record.expression, at])
            return db.changesCount == 1
        }
    }
}
