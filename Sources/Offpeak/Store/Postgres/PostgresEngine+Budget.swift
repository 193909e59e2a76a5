import Foundation
import PostgresNIO

/// Budget reservations on PostgreSQL, as the SQLite engine makes them (`Store+Budget`), with the
/// decision both make (`BudgetLimits.refusal(_:at:held:spent:)`).
///
/// What SQLite's one writer gives (two processes never both take the last dollar) comes from one
/// transaction advisory lock (`lockBudgets`): a reservation's check and insert take turns with every
/// other's, across processes and hosts. A call's commit, which gives its reservation way to its
/// ledger row, does not take the lock; the check reads what is held before what was spent, so a
/// commit between the two is counted twice (too much) and never missed.
extension PostgresEngine {
    func reserveBudget(_ ask: BudgetAsk, limits: BudgetLimits, now: Date) throws(OffpeakError)
        -> Result<Int64, BudgetRefusal>
    {
        try store.transaction { () throws(OffpeakError) -> Result<Int64, BudgetRefusal> in
            try lockBudgets()
            try dropStaleReservations()
            let refusal = try limits.refusal(
                ask, at: now,
                held: { (job: String?) throws(OffpeakError) -> BudgetUse in
                    try budgetHeld(job: job, owner: ask.owner)
                },
                spent: {
                    (period: DateInterval, job: String?, held: BudgetUse) throws(OffpeakError) -> BudgetUse in
                    try budgetSpent(in: period, job: job, adding: held)
                })
            if let refusal { return .failure(refusal) }
            let rows = try store.query(
                """
                INSERT INTO budget_reservations (run_id, job, owner, host, dollars, tokens, reserved_at)
                VALUES (\(ask.runID), \(ask.job), \(ask.owner), \(ask.host), \(ask.dollars), \(ask.tokens), \(now))
                RETURNING id
                """)
            guard let row = rows.first else {
                throw OffpeakError(
                    .ioError, "PostgreSQL at \(store.url.endpoint) stored a reservation without its id")
            }
            return .success(try PostgresColumns(row, store)("id"))
        }
    }

    func releaseReservation(_ id: Int64) throws(OffpeakError) {
        try store.query("DELETE FROM budget_reservations WHERE id = \(id)")
    }

    func budgetUse(in period: DateInterval, job: String?) throws(OffpeakError) -> BudgetUse {
        try snapshot { () throws(OffpeakError) -> BudgetUse in
            try budgetSpent(in: period, job: job, adding: try budgetHeld(job: job, owner: nil))
        }
    }

    /// Takes the budgets' transaction advisory lock: reservations are checked and made one at a time.
    func lockBudgets() throws(OffpeakError) {
        try store.query("SELECT pg_advisory_xact_lock(hashtextextended('offpeak budget', 0))")
    }

    /// Drops reservations whose run's lease is gone or expired, or whose owner died on this host
    /// (`StaleReservation`), in one statement.
    func dropStaleReservations(now: Date = Date()) throws(OffpeakError) {
        var runs: [String] = []
        var owners: [String] = []
        for row in try store.query(
            """
            SELECT DISTINCT r.run_id, r.owner, l.expires_at FROM budget_reservations r
            LEFT JOIN leases l ON l.run_id = r.run_id AND l.owner = r.owner
            """)
        {
            let columns = PostgresColumns(row, store)
            let owner: String = try columns("owner")
            let expires = try columns("expires_at", as: Date?.self)
            guard StaleReservation.isStale(owner: owner, leaseExpiresAt: expires, now: now) else { continue }
            runs.append(try columns("run_id"))
            owners.append(owner)
        }
        guard !runs.isEmpty else { return }
        try store.query(
            """
            DELETE FROM budget_reservations r USING unnest(\(runs)::text[], \(owners)::text[]) AS s(run_id, owner)
            WHERE r.run_id = s.run_id AND r.owner = s.owner
            """)
    }

    /// `held` with what the ledger says was spent in `period` (of `job` only when given).
    func budgetSpent(in period: DateInterval, job: String?, adding held: BudgetUse) throws(OffpeakError)
        -> BudgetUse
    {
        var use = held
        let rows = try store.query(
            """
            SELECT coalesce(sum(dollars ORDER BY at, id), 0) AS dollars,
                coalesce(sum(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens), 0)::bigint
                    AS tokens
            FROM ledger WHERE at >= \(period.start) AND at < \(period.end) AND (\(job == nil) OR job = \(job ?? ""))
            """)
        if let row = rows.first {
            let columns = PostgresColumns(row, store)
            use.spentDollars = try columns("dollars")
            use.spentTokens = try columns("tokens")
        }
        return use
    }

    /// What is held now, whatever the period: calls in flight (and, of them, other owners' than
    /// `owner`), and provider batches not yet collected; of `job` only when given. One statement.
    func budgetHeld(job: String?, owner: String?) throws(OffpeakError) -> BudgetUse {
        let open = [BatchRecord.State.preparing, .submitted, .ended].map(\.rawValue)
        let anyJob = job == nil
        let rows = try store.query(
            """
            SELECT coalesce(sum(dollars ORDER BY id), 0) AS dollars, coalesce(sum(tokens), 0)::bigint AS tokens,
                coalesce(sum(dollars ORDER BY id) FILTER (WHERE owner IS DISTINCT FROM \(owner)), 0) AS other_dollars,
                coalesce(sum(tokens) FILTER (WHERE owner IS DISTINCT FROM \(owner)), 0)::bigint AS other_tokens,
                (SELECT coalesce(sum(b.worst_dollars), 0) FROM provider_batches b JOIN runs r ON r.id = b.run_id
                    WHERE b.state = ANY(\(open)::text[]) AND (\(anyJob) OR r.job = \(job ?? ""))) AS batch_dollars,
                (SELECT coalesce(sum(b.worst_input_tokens + b.worst_output_tokens), 0)::bigint
                    FROM provider_batches b JOIN runs r ON r.id = b.run_id
                    WHERE b.state = ANY(\(open)::text[]) AND (\(anyJob) OR r.job = \(job ?? ""))) AS batch_tokens
            FROM budget_reservations WHERE \(anyJob) OR job = \(job ?? "")
            """)
        var use = BudgetUse()
        guard let row = rows.first else { return use }
        let columns = PostgresColumns(row, store)
        use.inFlightDollars = try columns("other_dollars")
        use.inFlightTokens = try columns("other_tokens")
        use.reservedDollars =
            try columns("dollars", as: Double.self) + columns("batch_dollars", as: Double.self)
        use.reservedTokens = try columns("tokens", as: Int.self) + columns("batch_tokens", as: Int.self)
        return use
    }
}
