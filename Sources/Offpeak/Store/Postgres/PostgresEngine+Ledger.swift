import Foundation
import PostgresNIO

/// The ledger's reads on PostgreSQL, as the SQLite engine makes them (`SQLiteStore+Ledger`,
/// `SQLiteStore+CostsByDay`, `SQLiteStore+Estimate`, `SQLiteStore+Latency`, `SQLiteStore+BatchReads`). Budgets are in
/// `+Budget`, the metrics' snapshot in `+Metrics`.
///
/// Dollars are doubles, and a sum of doubles depends on its order: each adds its rows in the order
/// SQLite's index gives them (`id`, or `at` then `id` for a time range), so both engines print the
/// same cents. Text sorts byte by byte (`COLLATE "C"`), as SQLite's does, whatever the database's locale.
///
/// The reports over the whole ledger (`costs`, `costs --by day`) read its rows in that order from a
/// subquery sorted as the index that covers them is (`SpendRules.ledgerColumns`), and add them as they
/// come: PostgreSQL (15) sorts each group's rows again for a `sum(… ORDER BY id)`, on 250,000 rows
/// two thirds of the statement (by job: 375 ms, 109 ms without; `EXPLAIN ANALYZE`, index-only scan).
extension PostgresEngine: LedgerStore {
    /// `SpendRules.columns`, the dollars added in `order` within the aggregate: for a sum whose rows
    /// come in no order of their own. (SQLite's aggregates take no `ORDER BY` before 3.44, so the
    /// rules sum a sorted subquery instead; here the whole ledger's sums keep the cheaper form.)
    static func spendColumns(order: String = "id") -> String {
        let order = " ORDER BY \(order)"
        return """
            coalesce(sum(calls) FILTER (WHERE NOT cache_hit), 0)::bigint AS calls,
            coalesce(sum(input_tokens), 0)::bigint AS input_tokens,
            coalesce(sum(output_tokens), 0)::bigint AS output_tokens,
            coalesce(sum(cache_read_tokens), 0)::bigint AS cache_read_tokens,
            coalesce(sum(cache_write_tokens), 0)::bigint AS cache_write_tokens,
            coalesce(sum(dollars\(order)), 0) AS dollars,
            coalesce(sum(naive_dollars\(order)), 0) AS naive_dollars,
            coalesce(sum(calls) FILTER (WHERE failed), 0)::bigint AS failed_calls,
            coalesce(sum(calls) FILTER (WHERE unpriced AND NOT cache_hit), 0)::bigint AS unpriced_calls
            """
    }

    /// The one row of sums `query` answers (every aggregate answers one).
    func spendRow(_ query: PostgresQuery) throws(OffpeakError) -> Spend {
        try store.query(query).first.map { row throws(OffpeakError) in try spend(row) } ?? Spend()
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
            SELECT key, \(unescaped: SpendRules.columns) FROM (
                SELECT \(unescaped: column) AS key, \(unescaped: SpendRules.ledgerColumns) FROM ledger
                ORDER BY \(unescaped: column), id
            ) ledger
            GROUP BY key ORDER BY dollars DESC, key COLLATE "C"
            """)
        {
            lines.append(CostLine(key: try PostgresColumns(row, store)("key"), spend: try spend(row)))
        }
        return lines
    }

    /// The days from the ledger's first call to its last, summed in one statement (`daySpends`);
    /// the walk from day to day with calls (`LedgerDay.costs`, two statements a day) when the
    /// calendar's days do not follow one another as `days(from:through:)` needs, or when a call
    /// lies so near a day's end that the walk would stretch that day over it.
    func costsByDay(calendar: Calendar, since: Date?) throws(OffpeakError) -> [CostLine] {
        try snapshot { () throws(OffpeakError) -> [CostLine] in
            let range: PostgresQuery =
                if let since {
                    "SELECT min(at) AS first, max(at) AS last FROM ledger WHERE at >= \(since)"
                } else {
                    "SELECT min(at) AS first, max(at) AS last FROM ledger"
                }
            let bounds = try store.query(range)
            guard let row = bounds.first else { return [] }
            let columns = PostgresColumns(row, store)
            guard let first = try columns("first", as: Date?.self),
                let last = try columns("last", as: Date?.self)
            else { return [] }
            if let days = LedgerDay.days(from: first, through: last, calendar: calendar),
                let lines = try daySpends(days)
            {
                return lines
            }
            return try walkDays(calendar: calendar, since: since)
        }
    }

    /// Each of `days`' sums, its rows added in the order of `at`, then `id`, read from the ledger's
    /// time index, one range scan a day; nil when a row lies in a day's last two milliseconds (the
    /// walk's day would hold it, or a row after it: `LedgerDay.init`).
    private func daySpends(_ days: [LedgerDay]) throws(OffpeakError) -> [CostLine]? {
        var spends: [String: Spend] = [:]
        for row in try store.query(
            """
            SELECT d.n, s.* FROM unnest(\(days.map(\.start))::timestamptz[], \(days.map(\.end))::timestamptz[])
                WITH ORDINALITY AS d (day_start, day_end, n)
            CROSS JOIN LATERAL (
                SELECT count(*) AS row_count,
                    count(*) FILTER (WHERE at >= d.day_end - interval '2 milliseconds') AS near_end,
                    \(unescaped: SpendRules.columns)
                FROM (
                    SELECT at, \(unescaped: SpendRules.ledgerColumns) FROM ledger
                    WHERE at >= d.day_start AND at < d.day_end ORDER BY at, id
                ) ledger
            ) s
            WHERE s.row_count > 0 ORDER BY d.n
            """)
        {
            let columns = PostgresColumns(row, store)
            guard try columns("near_end", as: Int.self) == 0 else { return nil }
            let index: Int = try columns("n")
            guard days.indices.contains(index - 1) else {
                throw OffpeakError(.software, "PostgreSQL answered day \(index) of \(days.count)")
            }
            spends[days[index - 1].text, default: Spend()].add(try spend(row))
        }
        return spends.keys.sorted(by: >).map { CostLine(key: $0, spend: spends[$0] ?? Spend()) }
    }

    /// `costsByDay` as the SQLite engine makes it: from each day with calls to the next.
    private func walkDays(calendar: Calendar, since: Date?) throws(OffpeakError) -> [CostLine] {
        try LedgerDay.costs(
            calendar: calendar, since: since,
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
                    SELECT \(unescaped: SpendRules.columns) FROM (
                        SELECT \(unescaped: SpendRules.ledgerColumns) FROM ledger
                        WHERE at >= \(day.start) AND at < \(day.end) ORDER BY at, id
                    ) ledger
                    """)
            })
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

    func spendByLane() throws(OffpeakError) -> [LaneModelSpend]? {
        try snapshot { () throws(OffpeakError) -> [LaneModelSpend]? in try lanes() }
    }

    /// `spendByLane()` inside a snapshot that reads more (the metrics').
    func lanes() throws(OffpeakError) -> [LaneModelSpend]? {
        let batches = try store.query(
            """
            SELECT EXISTS (SELECT 1 FROM provider_batches) OR EXISTS (SELECT 1 FROM ledger WHERE flex) AS made
            """
        ).first
        guard
            try batches.map({ row throws(OffpeakError) in
                try PostgresColumns(row, store)("made", as: Bool.self)
            })
                == true
        else { return nil }
        var lanes: [LaneModelSpend] = []
        for row in try store.query(
            """
            SELECT batch_api, flex, model, unpriced, \(unescaped: Self.spendColumns()),
                coalesce(sum(items) FILTER (WHERE NOT cache_hit), 0)::bigint AS items
            FROM ledger GROUP BY batch_api, flex, model, unpriced
            ORDER BY batch_api, flex, model COLLATE "C", unpriced
            """)
        {
            let columns = PostgresColumns(row, store)
            lanes.append(
                LaneModelSpend(
                    lane: try columns("batch_api") ? .batch : try columns("flex") ? .flex : .live,
                    model: try columns("model"),
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
