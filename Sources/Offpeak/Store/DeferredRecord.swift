import Foundation
import GRDB

/// Work held back because its conditions do not hold: a row of `deferred`, open until released.
struct DeferredRecord: StoredRecord, MutablePersistableRecord, Equatable {
    static let databaseTableName = "deferred"

    var id: Int64?
    var job: String
    /// The run that waits, when the job had one when it was deferred.
    var runId: String?
    /// Each failing reason, `; `-separated, as `ConditionGate.Reason` words them.
    var reasons: String
    /// The host whose conditions gave `reasons` (`HostName`): the last to defer the job, since
    /// another host's conditions may differ. '' on rows deferred before hosts were recorded.
    var host: String
    /// When the work was first deferred; re-checks keep it.
    var deferredAt: Date
    /// When the conditions were last read for it.
    var checkedAt: Date
    var releasedAt: Date?

    var reasonList: [String] {
        reasons.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
