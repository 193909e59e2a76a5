import Foundation

/// What the ledger says was spent, decided once for both engines (`SQLEngine`): a run's from its
/// running totals (`run_spend`, kept by triggers on the ledger), the rest summed over the ledger's
/// covering indexes.
extension LedgerStore where Self: SQLEngine {
    func spend(runID: String) throws(OffpeakError) -> Spend {
        try alone { sql throws(OffpeakError) in try SpendRules.runSpend(sql, runID: runID) }
    }

    func recountSpend(runID: String) throws(OffpeakError) -> Spend {
        try alone { sql throws(OffpeakError) in
            try SpendRules.sum(sql, where: "run_id = \(runID)", orderedBy: "id")
        }
    }

    func spend(since start: Date) throws(OffpeakError) -> Spend {
        try alone { sql throws(OffpeakError) in
            try SpendRules.sum(sql, where: "at >= \(start)", orderedBy: "at, id")
        }
    }

    func unpricedModels() throws(OffpeakError) -> [String] {
        try alone { sql throws(OffpeakError) -> [String] in
            try sql.rows(
                """
                SELECT DISTINCT \(sql.bytewise("model")) AS model FROM ledger WHERE unpriced AND NOT cache_hit
                ORDER BY 1
                """
            ).map { row throws(OffpeakError) -> String in try row("model") }
        }
    }

    func lostCalls() throws(OffpeakError) -> (calls: Int, dollars: Double) {
        let rows = try rows(
            """
            SELECT CAST(COALESCE(SUM(calls), 0) AS BIGINT) AS calls, COALESCE(SUM(dollars), 0.0) AS dollars
            FROM (SELECT calls, dollars FROM ledger WHERE lost ORDER BY id) AS lost
            """)
        guard let row = rows.first else { return (0, 0) }
        return (try row("calls", as: Int.self), try row("dollars", as: Double.self))
    }

    func searchesByModel() throws(OffpeakError) -> [String: Int] {
        var searches: [String: Int] = [:]
        for row in try rows(
            """
            SELECT model, CAST(SUM(search_requests) AS BIGINT) AS searches FROM ledger WHERE search_requests > 0
            GROUP BY model
            """)
        {
            searches[try row("model"), default: 0] += try row("searches", as: Int.self)
        }
        return searches
    }
}

/// A spend's sums over ledger rows, for the rules above and the engines' own reports.
///
/// Dollars are doubles, and a sum of doubles depends on its order: the rows are added in the order
/// of the index that covers them (`id`, or `at` then `id` for a time range), read from a sorted
/// subquery, which neither engine merges into the sum above it, so both print the same cents.
enum SpendRules {
    /// The sums, as a spend reads them (`Spend(row:)`), of the rows in the order they come; counts
    /// and token sums typed back as `BIGINT` (PostgreSQL's `sum` of a `bigint` is a `numeric`). A
    /// row stands for `calls` calls (more than one once rolled up: `LedgerRollUp`), so calls are
    /// summed, never the rows counted.
    static let columns = """
        CAST(COALESCE(SUM(calls) FILTER (WHERE NOT cache_hit), 0) AS BIGINT) AS calls,
        CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT) AS input_tokens,
        CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT) AS output_tokens,
        CAST(COALESCE(SUM(cache_read_tokens), 0) AS BIGINT) AS cache_read_tokens,
        CAST(COALESCE(SUM(cache_write_tokens), 0) AS BIGINT) AS cache_write_tokens,
        COALESCE(SUM(dollars), 0.0) AS dollars,
        COALESCE(SUM(naive_dollars), 0.0) AS naive_dollars,
        CAST(COALESCE(SUM(calls) FILTER (WHERE failed), 0) AS BIGINT) AS failed_calls,
        CAST(COALESCE(SUM(calls) FILTER (WHERE unpriced AND NOT cache_hit), 0) AS BIGINT) AS unpriced_calls
        """

    /// The ledger's columns a spend reads: every covering index of the ledger holds them after its
    /// key, so the sorted subquery reads the index alone.
    static let ledgerColumns =
        "id, cache_hit, failed, unpriced, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
        + "dollars, naive_dollars, calls"

    /// The run's spend from its running totals (`run_spend`, kept by triggers on the ledger); none
    /// before its first ledger row.
    static func runSpend(_ sql: any SQLConnection, runID: String) throws(OffpeakError) -> Spend {
        try sql.rows(
            """
            SELECT calls, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, dollars,
                naive_dollars, failed_calls, unpriced_calls
            FROM run_spend WHERE run_id = \(runID)
            """
        ).first.map { row throws(OffpeakError) in try Spend(row: row) } ?? Spend()
    }

    /// The spend of the ledger rows `condition` selects, added in `order` (which ends with `id`, so no
    /// two rows tie).
    static func sum(_ sql: any SQLConnection, where condition: SQLStatement, orderedBy order: String)
        throws(OffpeakError) -> Spend
    {
        try sql.rows(
            """
            SELECT \(unescaped: columns) FROM (
                SELECT \(unescaped: ledgerColumns) FROM ledger WHERE \(condition) ORDER BY \(unescaped: order)
            ) AS ordered
            """
        ).first.map { row throws(OffpeakError) in try Spend(row: row) } ?? Spend()
    }
}

extension Spend {
    /// A row holding `SpendRules.columns` (or `run_spend`'s, which are named alike).
    init(row: some SQLRow) throws(OffpeakError) {
        self.init()
        calls = try row("calls")
        inputTokens = try row("input_tokens")
        outputTokens = try row("output_tokens")
        cacheReadTokens = try row("cache_read_tokens")
        cacheWriteTokens = try row("cache_write_tokens")
        dollars = try row("dollars")
        naiveDollars = try row("naive_dollars")
        failedCalls = try row("failed_calls")
        unpricedCalls = try row("unpriced_calls")
    }
}
