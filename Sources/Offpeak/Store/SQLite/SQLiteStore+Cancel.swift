import Foundation
import GRDB

/// `offpeak cancel`: the one way work is dropped, at the user's word.
extension SQLiteStore {
    func cancelRun(runID: String, now: Date) throws(OffpeakError) -> Store.Cancellation {
        try write { db in
            guard var run = try RunRecord.fetchOne(db, key: runID) else {
                throw OffpeakError(.usage, "no run \(runID); `offpeak status` lists the runs")
            }
            guard run.state.isResumable else {
                throw OffpeakError(
                    .usage, "run \(runID) is \(run.state.rawValue): there is nothing to cancel")
            }
            try db.execute(
                sql: """
                    UPDATE requests SET state = \(SQLStates.request(.canceled)),
                    error = 'canceled by the user', next_attempt_at = NULL,
                    updated_at = ? WHERE run_id = ? AND state IN \(SQLStates.unsent)
                    """,
                arguments: [now, runID])
            let dropped = db.changesCount
            let inBatch =
                try Int.fetchOne(
                    db,
                    sql:
                        "SELECT COUNT(*) FROM requests WHERE run_id = ? AND state = \(SQLStates.request(.inBatch))",
                    arguments: [runID]) ?? 0
            let reason = Store.cancelReason(inBatch: inBatch)
            do { try run.move(to: inBatch > 0 ? .waiting : .canceled, reason: reason, at: now) } catch {
                throw OffpeakError(.software, "\(error)")
            }
            try RunRules.update(run, SQLiteConnection(db: db))
            // Kept beside the run's row, not in `RunRecord`: a pass reads it once (`isCanceled`).
            try db.execute(sql: "UPDATE runs SET canceled_at = ? WHERE id = ?", arguments: [now, runID])
            try db.execute(
                sql: "UPDATE deferred SET released_at = ? WHERE run_id = ? AND released_at IS NULL",
                arguments: [now, runID])
            return Store.Cancellation(dropped: dropped, inBatch: inBatch, state: run.state)
        }
    }
}
