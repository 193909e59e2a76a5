import Foundation
import GRDB

/// Booking what comes back from a provider batch, and giving up on one never created.
extension Store {
    /// Books one item's result, matched by `customID` alone, in one transaction: its outcome, and
    /// for `succeeded` its ledger row (marked batch) and result with the request done; for
    /// `invalid` the request failed with the message (already redacted); for `again` the request
    /// back to pending, to go in a new batch or live.
    /// - Returns: false, booking nothing, when the item's outcome is already set (the same results
    ///   collected twice) or the batch has no such custom id.
    @discardableResult
    func commitBatchResult(batchID: String, customID: String, _ outcome: BatchItemResult, now: Date)
        throws(OffpeakError) -> Bool
    {
        try write { db in
            guard
                let item = try BatchItemRecord.fetchOne(
                    db, key: ["batch_id": batchID, "custom_id": customID]),
                item.outcome == nil
            else { return false }
            switch outcome {
            case .succeeded(var ledger, var result):
                ledger.batchApi = true
                try ledger.insert(db)
                result.requestId = item.requestId
                try Store.insertAnswer(result, ledgerID: ledger.id, at: now, db)
            case .invalid(let message):
                try db.execute(
                    sql: """
                        UPDATE requests SET state = 'failed', error = ?, attempts = attempts + 1, updated_at = ?
                        WHERE id = ?
                        """,
                    arguments: [message, now, item.requestId])
            case .again(_, let reason):
                try db.execute(
                    sql: """
                        UPDATE requests SET state = 'pending', error = ?, attempts = attempts + 1, updated_at = ?
                        WHERE id = ? AND state = 'in_batch'
                        """,
                    arguments: [reason, now, item.requestId])
            }
            try db.execute(
                sql: "UPDATE batch_items SET outcome = ? WHERE batch_id = ? AND custom_id = ?",
                arguments: [outcome.outcome.rawValue, batchID, customID])
            return true
        }
    }

    /// Marks the batch `collected` once every item's outcome is booked.
    /// - Returns: whether it is collected (false while an item has no outcome yet).
    @discardableResult
    func markCollected(batchID: String, now: Date) throws(OffpeakError) -> Bool {
        try write { db in
            let open =
                try Bool.fetchOne(
                    db,
                    sql: "SELECT EXISTS (SELECT 1 FROM batch_items WHERE batch_id = ? AND outcome IS NULL)",
                    arguments: [batchID]) ?? false
            guard !open else { return false }
            try db.execute(
                sql: """
                    UPDATE provider_batches SET state = 'collected', collected_at = ?, next_poll_at = NULL
                    WHERE id = ?
                    """,
                arguments: [now, batchID])
            return true
        }
    }

    /// A `preparing` batch the provider never created (reconciliation found nothing): its requests
    /// still in the batch go back to pending, and the batch is `failed` with `reason`. A batch past
    /// `preparing` is left alone.
    func abandonPreparing(batchID: String, reason: String, now: Date) throws(OffpeakError) {
        try write { db in
            guard try Store.batch(batchID, db).state == .preparing else { return }
            try db.execute(
                sql: """
                    UPDATE requests SET state = 'pending', updated_at = ? WHERE state = 'in_batch'
                    AND id IN (SELECT request_id FROM batch_items WHERE batch_id = ?)
                    """,
                arguments: [now, batchID])
            try db.execute(
                sql:
                    "UPDATE provider_batches SET state = 'failed', error = ?, next_poll_at = NULL WHERE id = ?",
                arguments: [reason, batchID])
        }
    }

    /// The batch with this id, or an error naming it.
    static func batch(_ id: String, _ db: Database) throws -> BatchRecord {
        guard let batch = try BatchRecord.fetchOne(db, key: id) else {
            throw OffpeakError(.software, "no provider batch \(id) in the store")
        }
        return batch
    }
}
