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
}
