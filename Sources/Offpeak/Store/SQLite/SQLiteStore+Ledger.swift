import Foundation
import GRDB

extension SQLiteStore {
    static let spendColumns = """
        COUNT(*) FILTER (WHERE NOT cache_hit) AS calls,
        COALESCE(SUM(input_tokens), 0) AS input_tokens,
        COALESCE(SUM(output_tokens), 0) AS output_tokens,
        COALESCE(SUM(cache_read_tokens), 0) AS cache_read_tokens,
        COALESCE(SUM(cache_write_tokens), 0) AS cache_write_tokens,
        COALESCE(SUM(dollars), 0) AS dollars,
        COALESCE(SUM(naive_dollars), 0) AS naive_dollars,
        COUNT(*) FILTER (WHERE failed) AS failed_calls,
        COUNT(*) FILTER (WHERE unpriced AND NOT cache_hit) AS unpriced_calls
        """

    static func spend(_ row: Row) -> Spend {
        var spend = Spend()
        spend.calls = row["calls"]
        spend.inputTokens = row["input_tokens"]
        spend.outputTokens = row["output_tokens"]
        spend.cacheReadTokens = row["cache_read_tokens"]
        spend.cacheWriteTokens = row["cache_write_tokens"]
        spend.dollars = row["dollars"]
        spend.naiveDollars = row["naive_dollars"]
        spend.failedCalls = row["failed_calls"]
        spend.unpricedCalls = row["unpriced_calls"]
        return spend
    }

    func spend(runID: String) throws(OffpeakError) -> Spend {
        try read { db in try SQLiteStore.spend(runID: runID, db) }
    }

    /// The run's spend from its running totals (`run_spend`, kept by triggers on the ledger).
    static func spend(runID: String, _ db: Database) throws -> Spend {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT calls, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, dollars,
                    naive_dollars, failed_calls, unpriced_calls
                FROM run_spend WHERE run_id = ?
                """, arguments: [runID])
        return row.map(SQLiteStore.spend) ?? Spend()
    }

    func recountSpend(runID: String) throws(OffpeakError) -> Spend {
        try read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT \(SQLiteStore.spendColumns) FROM ledger WHERE run_id = ?", arguments: [runID]
            )
            return row.map(SQLiteStore.spend) ?? Spend()
        }
    }

    func spend(since start: Date) throws(OffpeakError) -> Spend {
        try read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT \(SQLiteStore.spendColumns) FROM ledger WHERE at >= ?", arguments: [start])
            return row.map(SQLiteStore.spend) ?? Spend()
        }
    }

    func unpricedModels() throws(OffpeakError) -> [String] {
        try read { db in
            try String.fetchAll(
                db, sql: "SELECT DISTINCT model FROM ledger WHERE unpriced AND NOT cache_hit ORDER BY model")
        }
    }

    func searchesByModel() throws(OffpeakError) -> [String: Int] {
        try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT model, SUM(search_requests) AS searches FROM ledger WHERE search_requests > 0
                    GROUP BY model
                    """)
            return Dictionary(rows.map { ($0["model"], $0["searches"]) }, uniquingKeysWith: +)
        }
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
            ).map { CostLine(key: $0["key"], spend: SQLiteStore.spend($0)) }
        }
    }
}
