import Foundation

/// Reservations against the workspace's and the jobs' daily and monthly budgets, shared by every
/// process on the store, decided once for both engines (`SQLEngine`).
///
/// A call is reserved (its worst case) in one write transaction that holds the budgets' lock
/// (`SQLLock.budgets`) and first checks spent + reserved + this worst case against every budget
/// (`BudgetLimits.refusal`), so two processes can never both take the last dollar. The reservation
/// is replaced by the call's ledger row in the transaction that commits the call, which does not
/// take the lock: the check reads what is held before what was spent, so a commit between the two
/// is counted twice (too much) and never missed.
///
/// A reservation lives as long as its owner's hold on the run (its lease, or a helper's claim): it is
/// dropped when that is gone or expired, or its owner is a process of this host that no longer runs
/// (`StaleReservation`). So a crashed process's reservations never block for longer than the hold's
/// time to live. A provider
/// batch's own reservation is its row in `provider_batches` (its worst case), held until collected.
///
/// Dollars are doubles, whose sum depends on its order: they are added in the order of the rows'
/// ids (the ledger's: its time, then id), from a sorted subquery, which neither engine merges into
/// the sum above it, so both print the same cents.
extension LedgerStore where Self: SQLEngine {
    func reserveBudget(_ ask: BudgetAsk, limits: BudgetLimits, now: Date) throws(OffpeakError)
        -> Result<Int64, BudgetRefusal>
    {
        guard limits.isSet else {
            // Only written down: it must outlive a kill of this process, not a power cut, which
            // ends the call with it.
            return .success(
                try writingLightly { sql throws(OffpeakError) in try BudgetRules.insert(ask, now, sql) })
        }
        return try writing { sql throws(OffpeakError) -> Result<Int64, BudgetRefusal> in
            try sql.lock(.budgets)
            // Leases are written and renewed by the machine's clock, whatever clock the ask's
            // periods are read by (`now`, which a test may set days ahead).
            try BudgetRules.settleStaleReservations(sql, now: Date())
            let refusal = try limits.refusal(
                ask, at: now,
                held: { (job: String?) throws(OffpeakError) -> BudgetUse in
                    try BudgetRules.held(sql, job: job, owner: ask.owner)
                },
                spent: {
                    (period: DateInterval, job: String?, held: BudgetUse) throws(OffpeakError) -> BudgetUse in
                    try BudgetRules.spent(sql, in: period, job: job, adding: held)
                })
            if let refusal { return .failure(refusal) }
            return .success(try BudgetRules.insert(ask, now, sql))
        }
    }

    func bookLostCalls() throws(OffpeakError) {
        try writing { sql throws(OffpeakError) in try BudgetRules.settleStaleReservations(sql, now: Date()) }
    }

    func releaseReservation(_ id: Int64) throws(OffpeakError) {
        try writing { sql throws(OffpeakError) in try BudgetRules.release(id, sql) }
    }

    func budgetUse(in period: DateInterval, job: String?) throws(OffpeakError) -> BudgetUse {
        try reading { sql throws(OffpeakError) -> BudgetUse in
            try BudgetRules.spent(
                sql, in: period, job: job, adding: try BudgetRules.held(sql, job: job, owner: nil))
        }
    }
}

/// The budget's statements, for the rules above and for the engines' commits, which give a call's
/// reservation back in their own transaction.
enum BudgetRules {
    /// Gives a reservation back.
    static func release(_ id: Int64, _ sql: any SQLConnection) throws(OffpeakError) {
        try sql.execute("DELETE FROM budget_reservations WHERE id = \(Int(id))")
    }

    /// Writes `ask` down, with the ledger row its call leaves if lost (`BudgetAsk.call`).
    /// - Returns: the reservation's id.
    static func insert(_ ask: BudgetAsk, _ now: Date, _ sql: any SQLConnection) throws(OffpeakError) -> Int64
    {
        let call = ask.call
        let rows = try sql.rows(
            """
            INSERT INTO budget_reservations (run_id, job, owner, host, dollars, tokens, reserved_at,
                provider, model, tier, downgraded, items, input_tokens, output_tokens, expected_dollars,
                unpriced, search_requests, audit, flex, price_window, tags)
            VALUES (\(ask.runID), \(ask.job), \(ask.owner), \(ask.host), \(ask.dollars), \(ask.tokens), \(now),
                \(call?.provider), \(call?.model), \(call?.tier ?? ""), \(call?.downgraded ?? false),
                \(call?.items ?? 0), \(call?.inputTokens ?? 0), \(call?.outputTokens ?? 0),
                \(call?.dollars ?? 0), \(call?.unpriced ?? false), \(call?.searchRequests ?? 0),
                \(call?.audit ?? false), \(call?.flex ?? false), \(call?.priceWindow ?? ""), \(call?.tags ?? ""))
            RETURNING id
            """)
        guard let row = rows.first else {
            throw OffpeakError(.ioError, "the store kept a budget reservation without its id")
        }
        return Int64(try row("id", as: Int.self))
    }

    /// Settles reservations whose owner holds the run neither by its lease nor by a claim (a
    /// helper's, `JobRunner.help`, which has no lease) that is live, or whose owner died on this
    /// host (`StaleReservation`: only this process can tell the last, so the rows are read first):
    /// a call's is booked in the ledger as lost in flight (`LostCalls`), then every one is dropped.
    /// - Parameter runID: the run whose reservations to settle (one just taken over); nil: all.
    /// Takes the budgets' lock (`SQLLock.budgets`) first, so two processes never book one call twice.
    static func settleStaleReservations(_ sql: any SQLConnection, runID: String? = nil, now: Date)
        throws(OffpeakError)
    {
        try sql.lock(.budgets)
        let rows = try sql.rows(
            """
            SELECT DISTINCT r.run_id, r.owner, l.expires_at AS lease_expires_at, c.expires_at AS claim_expires_at
            FROM budget_reservations r
            LEFT JOIN leases l ON l.run_id = r.run_id AND l.owner = r.owner
            LEFT JOIN claims c ON c.run_id = r.run_id AND c.owner = r.owner
            \(runID.map { SQLStatement("WHERE r.run_id = \($0)") } ?? "")
            """)
        for row in rows {
            let owner: String = try row("owner")
            let lease: Date? = try row("lease_expires_at")
            let claim: Date? = try row("claim_expires_at")
            let expires = [lease, claim].compactMap { $0 }.max()
            guard StaleReservation.isStale(owner: owner, holdExpiresAt: expires, now: now) else { continue }
            let runID: String = try row("run_id")
            try LostCalls.book(sql, runID: runID, owner: owner)
            try sql.execute("DELETE FROM budget_reservations WHERE run_id = \(runID) AND owner = \(owner)")
        }
    }

    /// `held` with what the ledger says was spent in `period` (of `job` only when given).
    static func spent(_ sql: any SQLConnection, in period: DateInterval, job: String?, adding held: BudgetUse)
        throws(OffpeakError) -> BudgetUse
    {
        var use = held
        let rows = try sql.rows(
            """
            SELECT COALESCE(SUM(dollars), 0.0) AS dollars, CAST(COALESCE(SUM(tokens), 0) AS BIGINT) AS tokens
            FROM (
                SELECT dollars, input_tokens + output_tokens + cache_read_tokens + cache_write_tokens AS tokens
                FROM ledger WHERE at >= \(period.start) AND at < \(period.end) \(jobFilter(job))
                ORDER BY at, id
            ) AS spent
            """)
        if let row = rows.first {
            use.spentDollars = try row("dollars")
            use.spentTokens = try row("tokens")
        }
        return use
    }

    /// What is held now, whatever the period: calls in flight (and, of them, other owners' than
    /// `owner`), and provider batches not yet collected; of `job` only when given.
    static func held(_ sql: any SQLConnection, job: String?, owner: String?) throws(OffpeakError) -> BudgetUse
    {
        let calls = try sql.rows(
            """
            SELECT COALESCE(SUM(dollars), 0.0) AS dollars, CAST(COALESCE(SUM(tokens), 0) AS BIGINT) AS tokens,
                COALESCE(SUM(dollars) FILTER (WHERE owner IS DISTINCT FROM \(owner)), 0.0) AS other_dollars,
                CAST(COALESCE(SUM(tokens) FILTER (WHERE owner IS DISTINCT FROM \(owner)), 0) AS BIGINT)
                    AS other_tokens
            FROM (SELECT dollars, tokens, owner FROM budget_reservations WHERE 1 = 1 \(jobFilter(job))
                ORDER BY id) AS held
            """)
        let batches = try sql.rows(
            """
            SELECT COALESCE(SUM(b.worst_dollars), 0.0) AS dollars,
                CAST(COALESCE(SUM(b.worst_input_tokens + b.worst_output_tokens), 0) AS BIGINT) AS tokens
            FROM provider_batches b JOIN runs r ON r.id = b.run_id
            WHERE b.state IN \(unescaped: SQLStates.openBatches) \(job.map { SQLStatement("AND r.job = \($0)") } ?? "")
            """)
        var use = BudgetUse()
        if let row = calls.first {
            use.inFlightDollars = try row("other_dollars")
            use.inFlightTokens = try row("other_tokens")
            use.reservedDollars = try row("dollars")
            use.reservedTokens = try row("tokens")
        }
        if let row = batches.first {
            use.reservedDollars += try row("dollars", as: Double.self)
            use.reservedTokens += try row("tokens", as: Int.self)
        }
        return use
    }

    /// `AND job = …` when a job is given, else nothing.
    private static func jobFilter(_ job: String?) -> SQLStatement {
        job.map { "AND job = \($0)" } ?? ""
    }
}
