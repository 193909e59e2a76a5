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
