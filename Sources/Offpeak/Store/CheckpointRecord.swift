import Foundation
import GRDB

/// What a run has finished: written in the same transaction as the results it counts.
struct CheckpointRecord: StoredRecord, PersistableRecord, Equatable {
    static let databaseTableName = "checkpoints"

    var runId: String
    var segment: Int
    var done: Int
    var lastRequestId: String?
    var updatedAt: Date
}

/// Who is running a run, until when: a process renews it after every call.
struct LeaseRecord: StoredRecord, PersistableRecord, Equatable {
    static let databaseTableName = "leases"

    var runId: String
    /// `host:pid`.
    var owner: String
    var acquiredAt: Date
    var heartbeatAt: Date
    var expiresAt: Date
    /// The host the owner runs on (`HostName`).
    var host: String

    /// How long before its release a released lease expires: more than either engine's rounding of
    /// a time (SQLite keeps milliseconds rounded to the nearest), so a lease released now is never
    /// read back as live.
    static let releasedAgo: TimeInterval = 0.001
}
