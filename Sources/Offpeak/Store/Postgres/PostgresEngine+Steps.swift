import Foundation
import PostgresNIO

/// Canceling a run and deciding the steps of its long items: each reads and writes in one
/// transaction with the run's row locked, so two processes never decide on the same rows.
extension PostgresEngine {
    func cancelRun(runID: String, now: Date) throws(OffpeakError) -> Store.Cancellation {
        try store.transaction { () throws(OffpeakError) -> Store.Cancellation in
            guard
                let row = try store.query(
                    "SELECT \(unescaped: RunRules.runColumns) FROM runs WHERE id = \(runID) FOR UPDATE"
                ).first
            else {
                throw OffpeakError(.usage, "no run \(runID); `offpeak status` lists the runs")
            }
            var run = try RunRecord(row: PostgresSQLRow(columns: PostgresColumns(row, store)))
            guard run.state.isResumable else {
                throw OffpeakError(
                    .usage, "run \(runID) is \(run.state.rawValue): there is nothing to cancel")
            }
            let unsent = [RequestRecord.State.pending, .retrying, .waiting].map(\.rawValue)
            let dropped = try store.query(
                """
                UPDATE requests SET state = \(RequestRecord.State.canceled.rawValue),
                    error = 'canceled by the user', next_attempt_at = NULL, updated_at = \(now)
                WHERE run_id = \(runID) AND state = ANY(\(unsent)::text[])
                RETURNING 1
                """
            ).count
            var inBatch = 0
            if let row = try store.query(
                """
                SELECT count(*) FROM requests
                WHERE run_id = \(runID) AND state = \(RequestRecord.State.inBatch.rawValue)
                """
            ).first {
                inBatch = try store.decode(row, as: Int.self)
            }
            let reason = Store.cancelReason(inBatch: inBatch)
            do { try run.move(to: inBatch > 0 ? .waiting : .canceled, reason: reason, at: now) } catch {
                throw OffpeakError(.software, "\(error)")
            }
            try updateRow(run)
            // Kept beside the run's row, not in `RunRecord`: a pass reads it once (`isCanceled`).
            try store.query("UPDATE runs SET canceled_at = \(now) WHERE id = \(runID)")
            try store.query(
                "UPDATE deferred SET released_at = \(now) WHERE run_id = \(runID) AND released_at IS NULL")
            return Store.Cancellation(dropped: dropped, inBatch: inBatch, state: run.state)
        }
    }

    func advanceSteps(
        runID: String,
        _ decide: ([RequestRecord], [String: ResultRecord]) -> StepChanges
    ) throws(OffpeakError) -> Bool {
        try store.transaction { () throws(OffpeakError) -> Bool in
            try lockRun(runID)
            let requests = try self.requests(
                try store.query(
                    "SELECT \(unescaped: Self.requestColumns) FROM requests WHERE run_id = \(runID)"))
            let changes = decide(requests, try results(runID: runID))
            guard !changes.isEmpty else { return false }
            let now = Date()
            if !changes.delete.isEmpty {
                try store.query("DELETE FROM requests WHERE id = ANY(\(changes.delete)::text[])")
            }
            // A step is inserted at most once: one its run already has fails the transaction.
            try insertNewRequests(changes.insert, whole: true)
            if !changes.promote.isEmpty {
                try store.query(
                    """
                    UPDATE requests r SET payload = u.payload, cache_key = u.cache_key,
                        state = \(RequestRecord.State.pending.rawValue), error = NULL, updated_at = \(now)
                    FROM unnest(\(changes.promote.map(\.id))::text[], \(changes.promote.map(\.payload))::text[],
                        \(changes.promote.map(\.cacheKey))::text[]) AS u(id, payload, cache_key)
                    WHERE r.id = u.id
                    """)
            }
            if !changes.fail.isEmpty {
                try store.query(
                    """
                    UPDATE requests r SET state = \(RequestRecord.State.failed.rawValue), error = u.reason,
                        updated_at = \(now)
                    FROM unnest(\(changes.fail.map(\.id))::text[], \(changes.fail.map(\.reason))::text[])
                        AS u(id, reason)
                    WHERE r.id = u.id
                    """)
            }
            let counts = try RunRules.itemCounts(PostgresSQLConnection(engine: self), runID: runID)
            try store.query(
                """
                UPDATE runs SET items_done = \(counts.done), items_failed = \(counts.failed), updated_at = \(now)
                WHERE id = \(runID)
                """)
            return changes.addsWork
        }
    }
}
