import Foundation
import GRDB

extension SQLiteStore {
    /// `SpendRules.columns`, for the SQLite engine's own reports.
    static let spendColumns = SpendRules.columns

    /// A row holding `spendColumns` (or `run_spend`'s), read as the rules read one (`Spend(row:)`).
    static func spend(_ row: Row) throws -> Spend { try Spend(row: SQLiteRow(row: row)) }

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
