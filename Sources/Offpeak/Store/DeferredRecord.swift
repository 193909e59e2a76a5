import Foundation
import GRDB

/// Work held back because its conditions do not hold: a row of `deferred`, open until released.
public struct DeferredRecord: StoredRecord, MutablePersistableRecord, Equatable {
    public static let databaseTableName = "deferred"

    public var id: Int64?
    public var job: String
    /// The run that waits, when the job had one when it was deferred.
    public var runId: String?
    /// Each failing reason, `; `-separated, as `ConditionGate.Reason` words them.
    public var reasons: String
    /// When the work was first deferred; re-checks keep it.
    public var deferredAt: Date
    /// When the conditions were last read for it.
    public var checkedAt: Date
    public var releasedAt: Date?

    public var reasonList: [String] {
        reasons.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
