import Foundation
import GRDB

/// An entry of a spool folder that intake does not take (a folder, a named pipe, a link, a file
/// it cannot read), remembered so it is reported once — by the tick that first finds it, then by
/// `offpeak queue` — rather than warned about or retried on every tick. The row goes when the
/// entry does (or becomes something intake takes).
struct NotTakenRecord: StoredRecord, Equatable {
    static let databaseTableName = "spool_not_taken"

    var job: String
    /// The entry's path in the workspace, as messages show it: `spool/inbox/notes`.
    var entry: String
    /// Why it is not taken: "a folder; offpeak takes only regular files".
    var reason: String
    /// When a tick (or run) first found it so.
    var noticedAt: Date

    enum Columns {
        static let job = Column(CodingKeys.job)
        static let entry = Column(CodingKeys.entry)
    }
}

extension SQLiteStore {
    func noteNotTaken(job: String, found: [String: String], at now: Date) throws(OffpeakError)
        -> [NotTakenRecord]
    {
        // Most looks find what the last one did (nothing, mostly): no write then.
        let current = try read { db in
            try NotTakenRecord.filter(NotTakenRecord.Columns.job == job).fetchAll(db)
        }
        guard
            Dictionary(current.map { ($0.entry, $0.reason) }, uniquingKeysWith: { first, _ in first })
                != found
        else { return [] }
        return try write { db in
            let known = try NotTakenRecord.filter(NotTakenRecord.Columns.job == job).fetchAll(db)
            var fresh: [NotTakenRecord] = []
            for record in known where found[record.entry] != record.reason {
                try record.delete(db)
            }
            let kept = Set(known.filter { found[$0.entry] == $0.reason }.map(\.entry))
            for (entry, reason) in found.sorted(by: { $0.key < $1.key }) where !kept.contains(entry) {
                var record = NotTakenRecord(job: job, entry: entry, reason: reason, noticedAt: now)
                try record.insert(db, onConflict: .replace)
                fresh.append(record)
            }
            return fresh
        }
    }

    func notTaken() throws(OffpeakError) -> [NotTakenRecord] {
        try read { db in
            try NotTakenRecord.order(NotTakenRecord.Columns.job, NotTakenRecord.Columns.entry).fetchAll(db)
        }
    }
}
