import Foundation
import PostgresNIO

/// The ledger's reads on PostgreSQL, as the SQLite engine makes them (`Store+Ledger`,
/// `Store+CostsByDay`, `Store+Estimate`, `Store+Latency`, `Store+BatchReads`). Budgets are in
/// `+Budget`, the metrics' snapshot in `+Metrics`.
///
/// Dollars are doubles, and a sum of doubles depends on its order: each adds its rows in the order
/// SQLite's index gives them (`id`, or `at` then `id` for a time range), so both engines print the
/// same cents. Text sorts byte by byte (`COLLATE "C"`), as SQLite's does, whatever the database's locale.
extension PostgresEngine: LedgerStore {
    /// `SQLiteStore.spendColumns`, its sums as PostgreSQL types them back (`bigint`, not `numeric`),
    /// the dollars added in `order`.
    static func spendColumns(order: String = "id") -> String {
        """
        count(*) FILTER (WHERE NOT cache_hit) AS calls,
        coalesce(sum(input_tokens), 0)::bigint AS input_tokens,
        coalesce(sum(output_tokens), 0)::bigint AS output_tokens,
        coalesce(sum(cache_read_tokens), 0)::bigint AS cache_read_tokens,
        coalesce(sum(cache_write_tokens), 0)::bigint AS cache_write_tokens,
        coalesce(sum(dollars ORDER BY \(order)), 0) AS dollars,
        coalesce(sum(naive_dollars ORDER BY \(order)), 0) AS naive_dollars,
        count(*) FILTER (WHERE failed) AS failed_calls,
        count(*) FILTER (WHERE unpriced AND NOT cache_hit) AS unpriced_calls
        """
    }

    /// The one row of sums `query` answers (every aggregate answers one).
    func spendRow(_ query: PostgresQuery) throws(OffpeakError) -> Spend {
        try store.query(query).first.map { row throws(OffpeakError) in try spend(row) } ?? Spend()
    }

    func spend(runID: String) throws(OffpeakError) -> Spend {
        try spendRow("\(unescaped: Self.spendQuery) WHERE run_id = \(runID)")
    }

    func recountSpend(runID: String) throws(OffpeakError) -> Spend {
        try spendRow("SELECT \(unescaped: Self.spendColumns()) FROM ledger WHERE run_id = \(runID)")
    }

    func spend(since start: Date) throws(OffpeakError) -> Spend {
        try spendRow(
            "SELECT \(unescaped: Self.spendColumns(order: "at, id")) FROM ledger WHERE at >= \(start)")
    }

    func unpricedModels() throws(OffpeakError) -> [String] {
        var models: [String] = []
        for row in try store.query(
            """
            SELECT DISTINCT model COLLATE "C" AS model FROM ledger WHERE unpriced AND NOT cache_hit ORDER BY 1
            """)
        {
            models.append(try PostgresColumns(row, store)("model"))
        }
        return models
    }

    func costs(groupedBy key: CostLine.Key) throws(OffpeakError) -> [CostLine] {
        let column =
            switch key {
            case .job: "job"
            case .model: "model"
            }
        var lines: [CostLine] = []
        for row in try store.query(
            """
            SELECT \(unescaped: column) AS key, \(unescaped: Self.spendColumns()) FROM ledger
            GROUP BY \(unescaped: column) ORDER BY dollars DESC, \(unescaped: column) COLLATE "C"
            """)
        {
            lines.append(CostLine(key: try PostgresColumns(row, store)("key"), spend: try spend(row)))
        }
        return lines
    }

    func costsByDay(calendar: Calendar) throws(OffpeakError) -> [CostLine] {
        try snapshot { () throws(OffpeakError) -> [CostLine] in
            try LedgerDay.costs(
                calendar: calendar,
                firstCall: { (start: Date?) throws(OffpeakError) -> Date? in
                    let row = try store.query(
                        "SELECT min(at) AS at FROM ledger WHERE \(start == nil) OR at >= \(start ?? Date())"
                    ).first
                    return try row.flatMap { row throws(OffpeakError) in
                        try PostgresColumns(row, store)("at", as: Date?.self)
                    }
                },
                spend: { (day: LedgerDay) throws(OffpeakError) -> Spend in
                    try spendRow(
                        """
                        SELECT \(unescaped: Self.spendColumns(order: "at, id")) FROM ledger
                        WHERE at >= \(day.start) AND at < \(day.end)
                        """)
                })
        }
    }

    /// A negative `calls` is no limit, as SQLite reads `LIMIT -1`.
    func outputPerItem(model: String, job: String?, calls: Int) throws(OffpeakError)
        -> (tokens: Double, items: Int)?
    {
        guard
            let row = try store.query(
                """
                SELECT sum(output_tokens)::bigint AS output, sum(items)::bigint AS items FROM (
                    SELECT output_tokens, items FROM ledger
                    WHERE model = \(model) AND (\(job == nil) OR job = \(job ?? "")) AND NOT cache_hit
                        AND NOT failed AND items > 0 AND output_tokens > 0
                    ORDER BY id DESC LIMIT \(calls < 0 ? nil : calls)) newest
                """
            ).first
        else { return nil }
        let columns = PostgresColumns(row, store)
        guard let items = try columns("items", as: Int?.self), items > 0,
            let output = try columns("output", as: Int?.self)
        else { return nil }
        return (Double(output) / Double(items), items)
    }

    func latency(model: String) throws(OffpeakError) -> LatencyEstimate? {
        try store.query(
            """
            SELECT ms_per_call, ms_per_output_token, output_tokens, samples FROM model_latency
            WHERE model = \(model)
            """
        ).first.map { row throws(OffpeakError) in
            let columns = PostgresColumns(row, store)
            return LatencyEstimate(
                msPerCall: try columns("ms_per_call"), msPerWeightedToken: try columns("ms_per_output_token"),
                outputTokens: try columns("output_tokens"), samples: try columns("samples"))
        }
    }

    func spendByLane() throws(OffpeakError) -> [LaneModelSpend]? {
        try snapshot { () throws(OffpeakError) -> [LaneModelSpend]? in try lanes() }
    }

    /// `spendByLane()` inside a snapshot that reads more (the metrics').
    func lanes() throws(OffpeakError) -> [LaneModelSpend]? {
        let batches = try store.query("SELECT EXISTS (SELECT 1 FROM provider_batches) AS made").first
        guard
            try batches.map({ row throws(OffpeakError) in
                try PostgresColumns(row, store)("made", as: Bool.self)
            })
                == true
        else { return nil }
        var lanes: [LaneModelSpend] = []
        for row in try store.query(
            """
            SELECT batch_api, model, unpriced, \(unescaped: Self.spendColumns()),
                coalesce(sum(items) FILTER (WHERE NOT cache_hit), 0)::bigint AS items
            FROM ledger GROUP BY batch_api, model, unpriced ORDER BY batch_api, model COLLATE "C", unpriced
            """)
        {
            let columns = PostgresColumns(row, store)
            lanes.append(
                LaneModelSpend(
                    batch: try columns("batch_api"), model: try columns("model"),
                    unpriced: try columns("unpriced"), spend: try spend(row), items: try columns("items")))
        }
        return lanes
    }

    /// Runs `body`'s reads in one snapshot, as SQLite's one read transaction does: statements in a
    /// `REPEATABLE READ` transaction all see the store as it was at the first. Not nested: `body`
    /// calls no method that takes a snapshot or a transaction of its own.
    func snapshot<T>(_ body: () throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        try store.transaction { () throws(OffpeakError) -> T in
            try store.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try body()
        }
    }
}
