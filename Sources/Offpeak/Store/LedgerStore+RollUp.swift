import Foundation

/// What rolling the ledger up removed (or, for a dry run, would remove).
public struct LedgerRollUpReport: Sendable, Equatable, Encodable {
    /// Pruned runs whose ledger rows were rolled up.
    public var runs = 0
    /// Their ledger rows before, and after.
    public var rows = 0
    public var rowsLeft = 0

    mutating func add(_ other: LedgerRollUpReport) {
        runs += other.runs
        rows += other.rows
        rowsLeft += other.rowsLeft
    }
}

/// The ledger rolled up by day (issue 46, item 1), written once for both engines.
///
/// The ledger keeps a row per call while its run's answers are kept. Once a run has been pruned
/// (`RetentionRules`) and finished before the ledger's own horizon (`retention.ledger`), its rows
/// of each local day that are alike in everything a report groups or filters them by (`keys`) are
/// made one: the row written first stays, holding the sums of all of them (`sums`, `calls` among
/// them), and the others go, in one transaction per run. Every total `costs` prints stays (by job,
/// model, day, lane, lost, audits, the cache's savings, a run's own; to the cent, since the dollars
/// are added in another order), and so does each run's counter (`run_spend`, whose triggers take
/// the deleted rows off and add the grown row's sums). A rolled-up row's `latency_ms` is its
/// calls' time in all; no estimate reads the ledger's latency (`model_latency` holds it).
enum LedgerRollUp {
    /// What a report groups or filters the ledger's rows by: rows alike in all of them (and in
    /// their run and day) become one.
    static let keys =
        "job, provider, model, tier, downgraded, batch_api, cache_hit, usage_estimated, failed, unpriced, host, "
        + "audit, flex, lost, price_window, tags"

    /// What a rolled-up row holds the sum of.
    static let sums = [
        "calls", "items", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
        "latency_ms", "search_requests",
    ]
    static let dollarSums = ["dollars", "naive_dollars", "waiting_saved"]

    /// Walks the local days of `runID`'s ledger rows (as `LedgerDay.costs` walks the ledger's):
    /// `day` is given each day holding a row of the run.
    static func days(
        _ sql: any SQLConnection, runID: String, calendar: Calendar,
        _ day: (LedgerDay) throws(OffpeakError) -> Void
    ) throws(OffpeakError) {
        var start: Date? = nil
        while true {
            let row = try sql.rows(
                """
                SELECT MIN(at) AS at FROM ledger WHERE run_id = \(runID) AND (\(start == nil) OR at >= \(start ?? Date()))
                """
            ).first
            guard let at = try row.flatMap({ row throws(OffpeakError) in try row("at", as: Date?.self) })
            else {
                return
            }
            let ledgerDay = LedgerDay(containing: at, calendar: calendar)
            try day(ledgerDay)
            start = ledgerDay.end
        }
    }

    /// Rolls up (or, `dryRun`, counts) the run's rows of `day`.
    static func rollUp(_ sql: any SQLConnection, runID: String, day: LedgerDay, dryRun: Bool)
        throws(OffpeakError) -> LedgerRollUpReport
    {
        let inDay: SQLStatement = "run_id = \(runID) AND at >= \(day.start) AND at < \(day.end)"
        let groups = try sql.rows(
            """
            SELECT MIN(id) AS keep, COUNT(*) AS n,
                \(unescaped: sums.map { "CAST(SUM(\($0)) AS BIGINT) AS \($0)" }.joined(separator: ", ")),
                \(unescaped: dollarSums.map { "SUM(\($0)) AS \($0)" }.joined(separator: ", "))
            FROM ledger WHERE \(inDay) GROUP BY \(unescaped: keys)
            """)
        var report = LedgerRollUpReport(runs: 0, rows: 0, rowsLeft: groups.count)
        for group in groups {
            let count: Int = try group("n")
            report.rows += count
            guard !dryRun, count > 1 else { continue }
            var assignments: [SQLStatement] = []
            for column in sums {
                assignments.append("\(unescaped: column) = \(try group(column, as: Int.self))")
            }
            for column in dollarSums {
                assignments.append("\(unescaped: column) = \(try group(column, as: Double.self))")
            }
            let keep: Int = try group("keep")
            try sql.execute(
                "UPDATE ledger SET \(SQLStatement.joined(assignments, separator: ", ")) WHERE id = \(keep)")
        }
        if !dryRun, report.rows > report.rowsLeft {
            try sql.execute(
                """
                DELETE FROM ledger WHERE \(inDay)
                    AND id NOT IN (SELECT MIN(id) FROM ledger WHERE \(inDay) GROUP BY \(unescaped: keys))
                """)
        }
        return report
    }
}

extension LedgerStore where Self: SQLEngine {
    func runsToRollUp(before cutoff: Date, limit: Int) throws(OffpeakError) -> [String] {
        try rows(
            """
            SELECT id FROM runs WHERE pruned_at IS NOT NULL AND ledger_rolled_at IS NULL AND updated_at < \(cutoff)
            ORDER BY updated_at LIMIT \(max(0, limit))
            """
        ).map { row throws(OffpeakError) -> String in try row("id") }
    }

    func rollUpLedger(runID: String, calendar: Calendar, at now: Date, dryRun: Bool)
        throws(OffpeakError) -> LedgerRollUpReport
    {
        let body = { (sql: any SQLConnection) throws(OffpeakError) -> LedgerRollUpReport in
            // Once pruned (a dry run counts a run it would prune too), and not rolled up yet.
            guard
                try !sql.rows(
                    """
                    SELECT 1 FROM runs WHERE id = \(runID) AND ledger_rolled_at IS NULL
                        AND (\(dryRun) OR pruned_at IS NOT NULL)
                    """
                ).isEmpty
            else { return LedgerRollUpReport() }
            var report = LedgerRollUpReport(runs: 1)
            try LedgerRollUp.days(sql, runID: runID, calendar: calendar) { day throws(OffpeakError) in
                report.add(try LedgerRollUp.rollUp(sql, runID: runID, day: day, dryRun: dryRun))
            }
            if !dryRun {
                try sql.execute("UPDATE runs SET ledger_rolled_at = \(now) WHERE id = \(runID)")
            }
            return report
        }
        if dryRun { return try reading(body) }
        return try writing { sql throws(OffpeakError) -> LedgerRollUpReport in
            try sql.lock(.run(runID))
            return try body(sql)
        }
    }
}
