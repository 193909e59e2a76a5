import Foundation
import GRDB

/// One run of a job: a row of `runs`.
public struct RunRecord: StoredRecord, PersistableRecord, Equatable {
    public static let databaseTableName = "runs"

    public var id: String
    public var job: String
    public var kind: String
    public var specHash: String
    public var state: RunState
    /// Why the run is in its state, in words a user reads ("provider unreachable: ...").
    public var reason: String?
    /// The budget that stopped it (`max_calls`, `max_dollars`, ...), if one did.
    public var budgetStop: String?
    public var provider: String
    public var model: String
    public var tier: String
    public var downgraded: Bool
    public var forced: Bool
    public var itemsTotal: Int
    public var itemsDone: Int
    public var itemsFailed: Int
    public var itemsCached: Int
    public var createdAt: Date
    public var startedAt: Date?
    public var updatedAt: Date
    public var finishedAt: Date?
    public var deadlineAt: Date?
}

extension RunRecord {
    /// Moves the run to `next`, refusing transitions `RunState` does not allow.
    mutating func move(to next: RunState, reason: String?, at now: Date) throws(InvalidTransition) {
        guard state == next || state.canMove(to: next) else {
            throw InvalidTransition(runID: id, from: state, to: next)
        }
        state = next
        self.reason = reason
        updatedAt = now
        if next == .running, startedAt == nil { startedAt = now }
        if next == .completed || next == .failed { finishedAt = now }
    }
}
