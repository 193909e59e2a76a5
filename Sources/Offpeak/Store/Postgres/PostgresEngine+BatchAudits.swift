import Foundation
import PostgresNIO

/// The batch audit's requests in provider batches (`batch_audits`), as `SQLiteStore+Batches` keeps them
/// on SQLite.
extension PostgresEngine {
    /// Inserts a new batch's audit requests, inside `prepareBatch`'s transaction.
    func insertAudits(_ audits: [BatchAuditSlot], batchID: String) throws(OffpeakError) {
        let customIDs = audits.indices.map { BatchRecord.auditCustomID(batchID: batchID, index: $0) }
        try store.query(
            """
            INSERT INTO batch_audits (batch_id, custom_id, request_id, batch_size, position)
            SELECT \(batchID), t.custom_id, t.request_id, t.batch_size, t.position
            FROM unnest(\(customIDs)::text[], \(audits.map(\.requestID))::text[],
                \(audits.map(\.size))::bigint[], \(audits.map(\.position))::bigint[])
                AS t(custom_id, request_id, batch_size, position)
            """)
    }

    func batchAudits(batchID: String) throws(OffpeakError) -> [(
        audit: BatchAuditRecord, request: RequestRecord
    )] {
        let rows = try store.query(
            """
            SELECT a.custom_id AS audit_custom_id, a.batch_size AS audit_batch_size,
                a.position AS audit_position, a.outcome AS audit_outcome,
                \(unescaped: Self.qualified(Self.requestColumns, by: "r"))
            FROM batch_audits a JOIN requests r ON r.id = a.request_id
            WHERE a.batch_id = \(batchID)
            """)
        var audits: [BatchAuditRecord] = []
        for row in rows {
            let column = PostgresColumns(row, store)
            audits.append(
                BatchAuditRecord(
                    batchId: batchID, customId: try column("audit_custom_id"), requestId: try column("id"),
                    batchSize: try column("audit_batch_size"), position: try column("audit_position"),
                    outcome: try column.value("audit_outcome", as: BatchItemRecord.Outcome?.self)))
        }
        return zip(audits, try requests(rows)).map { ($0, $1) }
            .sorted {
                (BatchRecord.auditIndex($0.0.customId) ?? 0) < (BatchRecord.auditIndex($1.0.customId) ?? 0)
            }
    }

    /// Sets an audit request's outcome, inside the transaction that books it.
    /// - Returns: false when it was already set (the audit is booked).
    func claimAudit(_ slot: AuditCommit.Slot) throws(OffpeakError) -> Bool {
        !(try store.query(
            """
            UPDATE batch_audits SET outcome = \(slot.outcome.rawValue)
            WHERE batch_id = \(slot.batchID) AND custom_id = \(slot.customID) AND outcome IS NULL
            RETURNING custom_id
            """)).isEmpty
    }
}
