import Foundation
import PostgresNIO

/// A batch's life at the provider on PostgreSQL, as the SQLite engine records it (`SQLiteStore+Batches`,
/// `SQLiteStore+BatchPollFailures`): its provider id, each poll and failed poll, its end. Each write is
/// one statement, or one transaction holding the batch's row.
extension PostgresEngine {
    func recordSubmitted(batchID: String, remoteID: String, now: Date, nextPoll: Date) throws(OffpeakError) {
        // Only a batch without an id takes one: a second process storing another finds it taken.
        let stored = try store.query(
            """
            UPDATE provider_batches SET remote_id = \(remoteID), state = \(BatchRecord.State.submitted.rawValue),
                submitted_at = \(now), next_poll_at = \(nextPoll)
            WHERE id = \(batchID) AND remote_id IS NULL
            RETURNING id
            """)
        guard stored.isEmpty else { return }
        guard let row = try store.query("SELECT remote_id FROM provider_batches WHERE id = \(batchID)").first
        else { throw OffpeakError(.software, "no provider batch \(batchID) in the store") }
        let known = try PostgresColumns(row, store)("remote_id", as: String?.self) ?? ""
        guard known == remoteID else {
            throw OffpeakError(
                .software, "batch \(batchID) already has provider id \(known), not \(remoteID)")
        }
    }

    func recordPoll(
        batchID: String, status: String, counts: RemoteBatch.Counts, expiresAt: Date?, next: Date
    ) throws(OffpeakError) {
        try store.transaction { () throws(OffpeakError) in
            var batch = try lockBatch(batchID)
            batch.notePoll(status: status, counts: counts, expiresAt: expiresAt, next: next)
            try StoredDate.check(batch)
            try store.query(
                """
                UPDATE provider_batches SET remote_status = \(batch.remoteStatus),
                    counts = \(try Self.countsText(batch.counts)), expires_at = \(batch.expiresAt),
                    polls = \(batch.polls), next_poll_at = \(batch.nextPollAt)
                WHERE id = \(batchID)
                """)
        }
    }

    func markEnded(batchID: String, now: Date) throws(OffpeakError) {
        try store.query(
            """
            UPDATE provider_batches SET state = \(BatchRecord.State.ended.rawValue), ended_at = \(now),
                next_poll_at = \(now)
            WHERE id = \(batchID) AND state = \(BatchRecord.State.submitted.rawValue)
            """)
    }

    func reschedulePoll(batchID: String, next: Date) throws(OffpeakError) {
        try store.query("UPDATE provider_batches SET next_poll_at = \(next) WHERE id = \(batchID)")
    }

    func recordPollFailure(batchID: String, reason: String, next: Date) throws(OffpeakError) {
        try store.query(
            """
            UPDATE provider_batches SET poll_failures = poll_failures + 1, poll_error = \(reason),
                next_poll_at = \(next)
            WHERE id = \(batchID)
            """)
    }

    func clearPollFailures(batchID: String) throws(OffpeakError) {
        try store.query(
            "UPDATE provider_batches SET poll_failures = 0, poll_error = NULL WHERE id = \(batchID)")
    }
}
