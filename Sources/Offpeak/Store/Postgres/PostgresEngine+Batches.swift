import Foundation
import PostgresNIO

/// Provider batches prepared and abandoned on PostgreSQL, as the SQLite engine keeps them
/// (`SQLiteStore+Batches`); the role's polls are in `PostgresEngine+BatchPolls`, its results in
/// `+BatchResults`, its reads in `+BatchReads`, fitness in `+BatchFitness`.
///
/// A batch is committed `preparing`, its requests `in_batch`, before the call that creates it at
/// the provider, so a process killed between the two leaves a row the next tick reconciles.
/// Requests are taken by a conditional update (still `pending` or `retrying`), and only those taken
/// get an item, so two processes packing the same request into batches never both take it: the
/// second finds it taken and commits nothing.
extension PostgresEngine: BatchStore {
    func prepareBatch(
        runID: String, provider: String, model: String, calls: [[String]], audits: [BatchAuditSlot],
        worstDollars: Double, worstTokens: (input: Int, output: Int), host: String, now: Date
    ) throws(OffpeakError) -> BatchRecord {
        let batch = BatchRecord.prepared(
            runID: runID, provider: provider, model: model, calls: calls, worstDollars: worstDollars,
            audits: audits.count, worstTokens: worstTokens, host: host, now: now)
        try StoredDate.check(batch)
        var items: [BatchItemRecord] = []
        for (index, requestIDs) in calls.enumerated() {
            for (slot, requestID) in requestIDs.enumerated() {
                items.append(
                    BatchItemRecord(
                        batchId: batch.id, requestId: requestID, customId: "\(batch.id)_\(index)", slot: slot)
                )
            }
        }
        var seen = Set<String>()
        if let twice = items.first(where: { !seen.insert($0.requestId).inserted }) {
            throw Self.notPending(twice.requestId, runID: runID)
        }
        return try store.transaction { () throws(OffpeakError) -> BatchRecord in
            try lockRun(runID)
            let taken = try store.query(
                """
                WITH batch AS (
                    INSERT INTO provider_batches (id, run_id, provider, model, state, prepared_at, worst_dollars,
                        requests, items, worst_input_tokens, worst_output_tokens, host)
                    VALUES (\(batch.id), \(runID), \(provider), \(model), \(batch.state.rawValue), \(now),
                        \(worstDollars), \(batch.requests), \(batch.items), \(batch.worstInputTokens),
                        \(batch.worstOutputTokens), \(host))),
                taken AS (
                    UPDATE requests SET state = \(RequestRecord.State.inBatch.rawValue), next_attempt_at = NULL,
                        updated_at = \(now)
                    WHERE id = ANY(\(items.map(\.requestId))::text[]) AND run_id = \(runID)
                        AND state IN \(unescaped: SQLStates.plannable)
                    RETURNING id),
                items AS (
                    INSERT INTO batch_items (batch_id, request_id, custom_id, slot)
                    SELECT \(batch.id), t.request_id, t.custom_id, t.slot
                    FROM unnest(\(items.map(\.requestId))::text[], \(items.map(\.customId))::text[],
                        \(items.map(\.slot))::bigint[]) AS t(request_id, custom_id, slot)
                    JOIN taken ON taken.id = t.request_id)
                SELECT id FROM taken
                """)
            guard taken.count < items.count else {
                if !audits.isEmpty { try insertAudits(audits, batchID: batch.id) }
                return batch
            }
            var took = Set<String>()
            for row in taken { took.insert(try store.decode(row, as: String.self)) }
            let refused = items.first { !took.contains($0.requestId) }
            throw Self.notPending(refused?.requestId ?? "?", runID: runID)
        }
    }

    func abandonPreparing(batchID: String, reason: String, now: Date) throws(OffpeakError) {
        try store.transaction { () throws(OffpeakError) in
            guard try lockBatch(batchID).state == .preparing else { return }
            try store.query(
                """
                WITH failed AS (
                    UPDATE provider_batches SET state = \(BatchRecord.State.failed.rawValue), error = \(reason),
                        next_poll_at = NULL
                    WHERE id = \(batchID))
                UPDATE requests r SET state = \(unescaped: Self.againOrCanceled), updated_at = \(now)
                WHERE r.state = \(RequestRecord.State.inBatch.rawValue)
                    AND r.id IN (SELECT request_id FROM batch_items WHERE batch_id = \(batchID))
                """)
        }
    }

    /// Locks the batch's row until the transaction ends, and reads it.
    /// - Throws: a software error naming the batch when there is none (as `SQLiteStore.batch`).
    func lockBatch(_ batchID: String) throws(OffpeakError) -> BatchRecord {
        guard
            let row = try store.query(
                "SELECT \(unescaped: Self.batchColumns) FROM provider_batches WHERE id = \(batchID) FOR UPDATE"
            ).first
        else { throw OffpeakError(.software, "no provider batch \(batchID) in the store") }
        return try batch(row)
    }

    /// A request of the batch `requests r` the batch did not answer goes again (`pending`), unless
    /// the user canceled its run (as `SQLiteStore.againOrCanceled`).
    static let againOrCanceled =
        "CASE WHEN (SELECT canceled_at FROM runs WHERE runs.id = r.run_id) IS NULL "
        + "THEN \(SQLStates.request(.pending)) ELSE \(SQLStates.request(.canceled)) END"

    /// The error a batch taking a request not `pending` or `retrying` fails with.
    static func notPending(_ requestID: String, runID: String) -> OffpeakError {
        OffpeakError(.software, "request \(requestID) of run \(runID) is not pending; it cannot join a batch")
    }
}
