import Foundation
import GRDB

/// A batch whose polls keep failing for a reason that is not transient (a 4xx, a results URL that
/// is not one, results that cannot be read) is still asked about at every poll, since its items
/// were paid for and nothing is dropped; what the store keeps of the failures lets `status`,
/// `batches` and `queue` say why it is not collected.
extension SQLiteStore {
    func recordPollFailure(batchID: String, reason: String, next: Date) throws(OffpeakError) {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE provider_batches SET poll_failures = poll_failures + 1, poll_error = ?,
                    next_poll_at = ? WHERE id = ?
                    """,
                arguments: [reason, next, batchID])
        }
    }

    func clearPollFailures(batchID: String) throws(OffpeakError) {
        try write { db in
            try db.execute(
                sql: "UPDATE provider_batches SET poll_failures = 0, poll_error = NULL WHERE id = ?",
                arguments: [batchID])
        }
    }
}
