import Foundation
import GRDB

/// One provider batch (Anthropic Message Batches, OpenAI Batch): a row of `provider_batches`.
///
/// Committed `preparing` before the call that creates it, so a process killed between the two
/// leaves a row for the next tick to reconcile; `submitted` once the provider's id is stored;
/// `ended` when the provider says its results are ready; `collected` when every item's result is
/// booked. `failed`: never created (or given up), its requests back to pending.
struct BatchRecord: StoredRecord, Equatable {
    static let databaseTableName = "provider_batches"

    enum State: String, Codable, Sendable {
        case preparing, submitted, ended, collected, failed
    }

    /// Our own id: `ob` and 12 hex digits; each item's `custom_id` starts with it.
    var id: String
    var runId: String
    var provider: String
    var model: String
    /// The provider's batch id; nil until the create call's answer is stored.
    var remoteId: String?
    var state: State
    var preparedAt: Date
    var submittedAt: Date?
    var endedAt: Date?
    var collectedAt: Date?
    /// When to ask the provider again (a batch is not polled every tick when nothing can have changed).
    var nextPollAt: Date?
    /// The worst case the batch can cost, counted against the job's budget while it is out.
    var worstDollars: Double
    var error: String?
    /// Provider requests (custom ids) in the batch, and the items (requests of the run) they carry:
    /// a batched prompt carries several.
    var requests = 0
    var items = 0
    /// What the provider said at the last poll: its own word for the state, its counts, its expiry.
    var remoteStatus: String?
    var counts: RemoteBatch.Counts?
    var expiresAt: Date?
    /// Times the provider was asked about the batch.
    var polls = 0
    /// The tokens the batch can use at most, counted against token budgets while it is out.
    var worstInputTokens = 0
    var worstOutputTokens = 0
    /// Polls in a row that failed for a reason that is not transient (the batch could not be asked
    /// about, or its results could not be fetched or read), and the last one's reason, redacted;
    /// 0 and nil once a poll goes through.
    var pollFailures = 0
    var pollError: String?
    /// The host that prepared the batch and sent it to the provider (`HostName`); '' on batches
    /// sent before hosts were recorded.
    var host = ""

    /// Whether the batch is still out: prepared, submitted or ended but not yet collected.
    var isOpen: Bool { state == .preparing || state == .submitted || state == .ended }

    /// Failed polls in a row after which a batch still out is shown as failing (`status`,
    /// `batches`, `queue`, the run's reason): one failure may be a server having a bad minute;
    /// three in a row, at least 2 s apart and further as the batch ages, are worth the user's eyes.
    /// The batch is still asked about at every poll.
    static let failuresShown = 3

    /// Whether the batch is out and its polls have failed `failuresShown` times in a row.
    var isFailing: Bool { isOpen && pollFailures >= Self.failuresShown }

    /// A new batch of `calls` (each call the ids of the requests it answers), about to be sent by
    /// `host`.
    static func prepared(
        runID: String, provider: String, model: String, calls: [[String]], worstDollars: Double,
        audits: Int = 0, worstTokens: (input: Int, output: Int), host: String, now: Date
    ) -> BatchRecord {
        var batch = BatchRecord(
            id: newID(), runId: runID, provider: provider, model: model, remoteId: nil, state: .preparing,
            preparedAt: now, worstDollars: worstDollars)
        batch.worstInputTokens = worstTokens.input
        batch.worstOutputTokens = worstTokens.output
        batch.requests = calls.count + audits
        batch.items = calls.reduce(0) { $0 + $1.count }
        batch.host = host
        return batch
    }

    static func newID() -> String {
        let hex = String(UInt64.random(in: 0..<(1 << 48)), radix: 16)
        return "ob" + String(repeating: "0", count: 12 - hex.count) + hex
    }
}

/// One request in a provider batch: a row of `batch_items`. Results are matched by `customId` only.
struct BatchItemRecord: StoredRecord, Equatable {
    static let databaseTableName = "batch_items"

    /// What the provider reported for the item; nil until its result is booked.
    enum Outcome: String, Codable, Sendable {
        case succeeded, errored, expired, canceled
    }

    var batchId: String
    var requestId: String
    /// `<batch id>_<n>`: unique in the batch, and within `^[a-zA-Z0-9_-]{1,64}$` (Anthropic's
    /// pattern). Several items share one when a batched prompt carries them.
    var customId: String
    /// The item's place in its batched prompt (0 when it goes alone).
    var slot = 0
    var outcome: Outcome?
}

/// An item of a batched prompt also asked alone in the same provider batch (the batch audit,
/// `AuditRecord`): a row of `batch_audits`. Its result is booked apart from the item's own
/// (`AuditCommit.slot`), once.
struct BatchAuditRecord: StoredRecord, Equatable {
    static let databaseTableName = "batch_audits"

    var batchId: String
    /// `<batch id>_a<n>` (`BatchRecord.auditCustomID`): never one of the items' custom ids.
    var customId: String
    var requestId: String
    /// Items in the batched prompt the request sits in, and its place there, from 1.
    var batchSize: Int
    var position: Int
    /// What the provider reported for the audit request; nil until it is booked.
    var outcome: BatchItemRecord.Outcome?
}

/// An audit request to send in a batch beside the batched prompt it checks.
struct BatchAuditSlot: Sendable, Equatable {
    var requestID: String
    var size: Int
    var position: Int
}

extension BatchRecord {
    /// The custom id of the batch's `index`-th audit request.
    static func auditCustomID(batchID: String, index: Int) -> String { "\(batchID)_a\(index)" }
}

extension BatchRecord {
    /// The n of an audit custom id (`auditCustomID`), for ordering; nil for any other.
    static func auditIndex(_ customID: String) -> Int? {
        guard let mark = customID.range(of: "_a", options: .backwards) else { return nil }
        return Int(customID[mark.upperBound...])
    }
}
