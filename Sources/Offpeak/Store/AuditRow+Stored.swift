import Foundation

/// An audited item as both engines store it (`audit_items`): its columns named once, in the order
/// their statements list them.
extension AuditRow {
    /// Every column but `id`, which the store numbers.
    static let columns = """
        at, job, run_id, request_id, item_id, provider, model, batch_size, position, agreed, similarity,
        batched_answer, single_answer, kept_single, ledger_id, host
        """
}

extension AuditCommit {
    /// Refuses, before any write, a commit holding a date the store could not read back
    /// (`StoredDate`), naming its table and column.
    func checkDates() throws(OffpeakError) {
        if let ledger { try StoredDate.check(ledger) }
        if let replacement { try StoredDate.check(replacement) }
        try cache?.checkDates()
        let dates: [(table: String, column: String, date: Date?)] = [
            ("audit_items", "at", row?.at), ("audit_records", "updated_at", change?.at),
        ]
        for (table, column, date) in dates {
            guard let date, !StoredDate.isStorable(date) else { continue }
            throw OffpeakError(
                .dataError,
                "cannot store \(table): \(column) is \(StoredDate.describe(date)); "
                    + "the store holds dates from year 1 to 9999")
        }
    }
}
