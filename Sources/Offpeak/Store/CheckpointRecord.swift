import Foundation
import GRDB

/// What a run has finished: written in the same transaction as the results it counts.
public struct CheckpointRecord: StoredRecord, PersistableRecord, Equatable {
    public static let databaseTableName = "checkpoints"

    public var runId: String
    public var segment: Int
    public var done: Int
    public var lastRequestId: String?
    public var updatedAt: Date
}

/// Who is running a run, until when: a process renews it after every call.
public struct LeaseRecord: StoredRecord, PersistableRecord, Equatable {
    public static let databaseTableName = "leases"

    public var runId: String
    /// `host:pid`.
    public var owner: String
    public var acquiredAt: Date
    public var heartbeatAt: Date
    public var expiresAt: Date
}
