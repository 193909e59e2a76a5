import Foundation
import GRDB

extension Store {
    /// Every job's schedule row, by job name.
    func scheduleRecords() throws(OffpeakError) -> [ScheduleRecord] {
        try read { db in try ScheduleRecord.order(Column("job")).fetchAll(db) }
    }

    /// One job's schedule row, if the job was ever seen with a schedule.
    func scheduleRecord(job: String) throws(OffpeakError) -> ScheduleRecord? {
        try read { db in try ScheduleRecord.fetchOne(db, key: job) }
    }

    /// Inserts or replaces `records`, all in one transaction.
    func saveSchedules(_ records: [ScheduleRecord]) throws(OffpeakError) {
        guard !records.isEmpty else { return }
        try write { db in
            for record in records { try record.save(db) }
        }
    }
}
