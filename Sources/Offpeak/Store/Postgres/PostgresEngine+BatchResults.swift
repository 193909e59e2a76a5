import Foundation
import PostgresNIO

/// What comes back from a provider batch, booked on PostgreSQL as the SQLite engine books it
/// (`SQLiteStore+BatchResults`), with the run path's commit pieces (`PostgresEngine+Commit`): the run's
/// lock with its lease, ledger rows and answers written many at a time, the run's counts and
/// checkpoint.
///
/// A custom id is claimed by setting its items' outcome where none is set yet, in the statement
/// that opens the transaction: a second process collecting the same batch waits on those rows, then
/// finds them booked and books nothing. Nothing is booked twice, whoever collects.
///
/// However many results a chunk holds, booking it for a run takes nine round trips, `BEGIN` and
/// `COMMIT` included: the claim, the run's lock with its lease, the ledger rows, the answers with
/// their requests' state, the requests not answered, the run's counts, the checkpoint with the spend.
/// No budget reservation is released here: a batch's requests give theirs back once its row holds
/// their worst case (`openBatchLoad`), which counts until it is collected.
extension PostgresEngine {
    @discardableResult
    func commitBatchCall(
        batchID: String, customID: String, _ booking: BatchBooking, run: RunRecord?,
        lease: RunHold?, now: Date
    ) throws(OffpeakError) -> Bool {
        try !commitBatchCalls(batchID: batchID, [(customID, booking)], run: run, lease: lease, now: now)
            .isEmpty
    }

    func commitBatchCalls(
        batchID: String, _ bookings: [(customID: String, booking: BatchBooking)], run: RunRecord?,
        lease: RunHold?, now: Date
    ) throws(OffpeakError) -> Set<String> {
        // A custom id given twice is booked by its first booking; the second would find it booked.
        var seen = Set<String>()
        let wanted = bookings.filter { seen.insert($0.customID).inserted }
        guard !wanted.isEmpty else { return [] }
        return try store.transaction { () throws(OffpeakError) -> Set<String> in
            let claimed = try claim(batchID, wanted)
            guard !claimed.isEmpty else { return [] }
            if let run { try lockRun(run.id, renewing: lease) }
            let writes = wanted.compactMap { wanted in
                claimed[wanted.customID].map { wanted.booking.writes(items: $0) }
            }
            var ledgerIDs = try insertLedger(writes.compactMap(\.ledger), latency: nil).makeIterator()
            var results: [ResultRecord] = []
            var paidBy: [Int64?] = []
            for call in writes {
                let ledgerID = call.ledger == nil ? nil : ledgerIDs.next() ?? nil
                results += call.results
                paidBy += call.results.map { _ in ledgerID }
            }
            try insertAnswers(results, ledger: .ids(paidBy), at: results.map { _ in now })
            try settle(writes, answered: Set(results.map(\.requestId)), now: now)
            if let run {
                let last = try lastRequest(batchID, customID: bookings.last?.customID, claimed: claimed)
                _ = try saveProgress(run, segment: 0, lastRequestID: last).read()
            }
            return Set(claimed.keys)
        }
    }

    @discardableResult
    func markCollected(batchID: String, now: Date) throws(OffpeakError) -> Bool {
        // Once: the batch must still be open, so a second collector finds it collected.
        !(try store.query(
            """
            UPDATE provider_batches SET state = \(BatchRecord.State.collected.rawValue), collected_at = \(now),
                next_poll_at = NULL
            WHERE id = \(batchID) AND state IN \(unescaped: SQLStates.openBatches)
                AND NOT EXISTS (SELECT 1 FROM batch_items WHERE batch_id = \(batchID) AND outcome IS NULL)
                AND NOT EXISTS (SELECT 1 FROM batch_audits WHERE batch_id = \(batchID) AND outcome IS NULL)
            RETURNING id
            """)).isEmpty
    }

    /// Sets the outcome of each custom id's items where none of them has one yet, in one statement.
    /// The items are locked in one order (custom id, slot) whoever claims them, so two collectors
    /// of one batch wait for each other rather than deadlock; one that waited finds them booked.
    /// - Returns: the items claimed (booked by this transaction), by custom id, in slot order.
    private func claim(_ batchID: String, _ bookings: [(customID: String, booking: BatchBooking)])
        throws(OffpeakError) -> [String: [BatchItemRecord]]
    {
        let rows = try store.query(
            """
            WITH locked AS (
                SELECT i.request_id, u.outcome FROM batch_items i
                JOIN unnest(\(bookings.map(\.customID))::text[], \(bookings.map(\.booking.outcome.rawValue))::text[])
                    AS u(custom_id, outcome) ON u.custom_id = i.custom_id
                WHERE i.batch_id = \(batchID) AND i.outcome IS NULL
                    AND NOT EXISTS (SELECT 1 FROM batch_items o
                        WHERE o.batch_id = i.batch_id AND o.custom_id = u.custom_id AND o.outcome IS NOT NULL)
                ORDER BY i.custom_id, i.slot
                FOR UPDATE OF i)
            UPDATE batch_items i SET outcome = l.outcome FROM locked l
            WHERE i.batch_id = \(batchID) AND i.request_id = l.request_id
            RETURNING i.batch_id, i.request_id, i.custom_id, i.slot, i.outcome
            """)
        var claimed: [String: [BatchItemRecord]] = [:]
        for row in rows {
            var item = try self.item(row)
            item.outcome = nil
            claimed[item.customId, default: []].append(item)
        }
        return claimed.mapValues { $0.sorted { $0.slot < $1.slot } }
    }

    /// Requests the calls did not answer: failed for good, or back to pending (canceled when their
    /// run is), one attempt more, each once and only while still in the batch; one statement.
    private func settle(_ writes: [BatchWrites], answered: Set<String>, now: Date) throws(OffpeakError) {
        var seen = answered
        let settled = writes.flatMap(\.settled).filter { seen.insert($0.id).inserted }
        guard !settled.isEmpty else { return }
        try store.query(
            """
            UPDATE requests r SET
                state = CASE WHEN u.again THEN \(unescaped: Self.againOrCanceled)
                    ELSE \(RequestRecord.State.failed.rawValue) END,
                error = u.reason, attempts = r.attempts + 1, updated_at = \(now)
            FROM unnest(\(settled.map(\.id))::text[], \(settled.map(\.reason))::text[],
                \(settled.map(\.again))::boolean[]) AS u(id, reason, again)
            WHERE r.id = u.id AND r.state = \(RequestRecord.State.inBatch.rawValue)
            """)
    }

    /// The checkpoint's last request: the last slot of the last custom id given (as SQLite reads it,
    /// booked now or before).
    private func lastRequest(_ batchID: String, customID: String?, claimed: [String: [BatchItemRecord]])
        throws(OffpeakError) -> String?
    {
        guard let customID else { return nil }
        if let items = claimed[customID] { return items.last?.requestId }
        return try store.query(
            """
            SELECT request_id FROM batch_items WHERE batch_id = \(batchID) AND custom_id = \(customID)
            ORDER BY slot DESC LIMIT 1
            """
        ).first.map { row throws(OffpeakError) in try store.decode(row, as: String.self) }
    }
}
