import Foundation
import GRDB

/// Booking what comes back from a provider batch, and giving up on one never created.
extension SQLiteStore {

    @discardableResult
    func commitBatchCall(
        batchID: String, customID: String, _ booking: BatchBooking, run: RunRecord?,
        lease: RunHold? = nil, now: Date
    ) throws(OffpeakError) -> Bool {
        try !commitBatchCalls(
            batchID: batchID, [(customID, booking)], run: run, lease: lease, now: now
        ).isEmpty
    }

    func commitBatchCalls(
        batchID: String, _ bookings: [(customID: String, booking: BatchBooking)], run: RunRecord?,
        lease: RunHold? = nil, now: Date
    ) throws(OffpeakError) -> Set<String> {
        try write { db in
            var booked = Set<String>()
            for (customID, booking) in bookings
            where try SQLiteStore.bookBatchCall(batchID: batchID, customID: customID, booking, now: now, db) {
                booked.insert(customID)
            }
            if let run, !booked.isEmpty {
                if let lease { try SQLiteStore.renew(lease, runID: run.id, requests: [], db) }
                let last = try String.fetchOne(
                    db,
                    sql:
                        "SELECT request_id FROM batch_items WHERE batch_id = ? AND custom_id = ? ORDER BY slot DESC",
                    arguments: [batchID, bookings.last?.customID])
                try SQLiteStore.saveProgress(db, run: run, segment: 0, lastRequestID: last)
            }
            return booked
        }
    }

    /// Books one custom id's result inside a write transaction; false when already booked or unknown.
    private static func bookBatchCall(
        batchID: String, customID: String, _ booking: BatchBooking, now: Date, _ db: Database
    ) throws -> Bool {
        let items = try BatchItemRecord.filter(
            Column("batch_id") == batchID && Column("custom_id") == customID
        )
        .order(Column("slot")).fetchAll(db)
        guard !items.isEmpty, items.allSatisfy({ $0.outcome == nil }) else { return false }
        let writes = booking.writes(items: items)
        var ledger = writes.ledger
        try ledger?.insert(db)
        for result in writes.results {
            try SQLiteStore.insertAnswer(result, ledgerID: ledger?.id, at: now, db)
        }
        for (id, reason, again) in writes.settled {
            let state = again ? SQLiteStore.againOrCanceled : SQLStates.request(.failed)
            try db.execute(
                sql: """
                    UPDATE requests SET state = \(state), error = ?, attempts = attempts + 1, updated_at = ?
                    WHERE id = ? AND state = \(SQLStates.request(.inBatch))
                    """,
                arguments: [reason, now, id])
        }
        try db.execute(
            sql: "UPDATE batch_items SET outcome = ? WHERE batch_id = ? AND custom_id = ?",
            arguments: [booking.outcome.rawValue, batchID, customID])
        return true
    }

    @discardableResult
    func markCollected(batchID: String, now: Date) throws(OffpeakError) -> Bool {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE provider_batches SET state = \(SQLStates.batch(.collected)), collected_at = ?,
                    next_poll_at = NULL
                    WHERE id = ? AND state IN \(SQLStates.openBatches)
                    AND NOT EXISTS (SELECT 1 FROM batch_items WHERE batch_id = ? AND outcome IS NULL)
                    AND NOT EXISTS (SELECT 1 FROM batch_audits WHERE batch_id = ? AND outcome IS NULL)
                    """,
                arguments: [now, batchID, batchID, batchID])
            return db.changesCount == 1
        }
    }

    func abandonPreparing(batchID: String, reason: String, now: Date) throws(OffpeakError) {
        try write { db in
            guard try SQLiteStore.batch(batchID, db).state == .preparing else { return }
            try db.execute(
                sql: """
                    UPDATE requests SET state = \(SQLiteStore.againOrCanceled),
                    updated_at = ? WHERE state = \(SQLStates.request(.inBatch))
                    AND id IN (SELECT request_id FROM batch_items WHERE batch_id = ?)
                    """,
                arguments: [now, batchID])
            try db.execute(
                sql:
                    "UPDATE provider_batches SET state = \(SQLStates.batch(.failed)), error = ?, next_poll_at = NULL "
                    + "WHERE id = ?",
                arguments: [reason, batchID])
        }
    }

    /// A request a batch did not answer goes again (`pending`), unless the user canceled its run.
    static let againOrCanceled =
        "CASE WHEN (SELECT canceled_at FROM runs WHERE runs.id = requests.run_id) IS NULL "
        + "THEN \(SQLStates.request(.pending)) ELSE \(SQLStates.request(.canceled)) END"

    /// The batch with this id, or an error naming it.
    static func batch(_ id: String, _ db: Database) throws -> BatchRecord {
        guard let batch = try BatchRecord.fetchOne(db, key: id) else {
            throw OffpeakError(.software, "no provider batch \(id) in the store")
        }
        return batch
    }
}
