import Foundation
import GRDB

extension SQLiteStore {
    /// `SpendRules.columns`, for the SQLite engine's own reports.
    static let spendColumns = SpendRules.columns

    /// A row holding `spendColumns` (or `run_spend`'s), read as the rules read one (`Spend(row:)`).
    static func spend(_ row: Row) throws -> Spend { try Spend(row: SQLiteRow(row: row)) }

    /// The run's spend from its running totals (`run_spend`, kept by triggers on the ledger).
    static func spend(runID: String, _ db: Database) throws -> Spend {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT calls, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, dollars,
                    naive_dollars, failed_calls, unpriced_calls
                FROM run_spend WHERE run_id = ?
                """, arguments: [runID])
        return try row.map(SQLiteStore.spend) ?? Spend()
    }

    func costs(groupedBy key: CostLine.Key) throws(OffpeakError) -> [CostLine] {
        let column =
            switch key {
            case .job: "job"
            case .model: "model"
            }
        return try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(column) AS key, \(SQLiteStore.spendColumns) FROM ledger
                    GROUP BY \(column) ORDER BY dollars DESC, key
                    """
            ).map { CostLine(key: $0["key"], spend: try SQLiteStore.spend($0)) }
        }
    }
}
