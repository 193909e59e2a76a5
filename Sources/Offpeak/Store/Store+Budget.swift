import Foundation
import GRDB

/// Reservations against the workspace's and the jobs' daily and monthly budgets, shared by every
/// process on the store.
///
/// A call is reserved (its worst case) in one write transaction that first checks
/// spent + reserved + this worst case against every budget; SQLite lets one writer in at a time, so
/// two processes can never both take the last dollar. The reservation is replaced by the call's
/// ledger row in the transaction that commits the call (`commitCall(releasing:)`).
///
/// A reservation lives as long as its run's lease (`Store+Leases`): it is dropped when the lease is
/// gone or expired, or its owner is a process of this host that no longer runs (killed with -9).
/// So a crashed process's reservations never block for longer than the lease's time to live.
/// A provider batch's own reservation is its row in `provider_batches` (its worst case), held until
/// it is collected.
extension SQLiteStore {
    func reserveBudget(_ ask: BudgetAsk, limits: BudgetLimits, now: Date) throws(OffpeakError)
        -> Result<Int64, BudgetRefusal>
    {
        try write { db in
            try SQLiteStore.dropStaleReservations(db)
            let refusal = try limits.refusal(
                ask, at: now, held: { job in try SQLiteStore.budgetHeld(db, job: job, owner: ask.owner) },
                spent: { period, job, held in
                    try SQLiteStore.budgetSpent(db, in: period, job: job, adding: held)
                })
            if let refusal { return .failure(refusal) }
            try db.execute(
                sql: """
                    INSERT INTO budget_reservations (run_id, job, owner, host, dollars, tokens, reserved_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [ask.runID, ask.job, ask.owner, ask.host, ask.dollars, ask.tokens, now])
            return .success(db.lastInsertedRowID)
        }
    }

    func releaseReservation(_ id: Int64) throws(OffpeakError) {
        try write { db in try SQLiteStore.releaseReservation(id, db) }
    }

    static func releaseReservation(_ id: Int64, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM budget_reservations WHERE id = ?", arguments: [id])
    }

    func budgetUse(in period: DateInterval, job: String? = nil) throws(OffpeakError) -> BudgetUse {
        try read { db in try SQLiteStore.budgetUse(db, in: period, job: job, owner: nil) }
    }

    /// Drops reservations whose run's lease is gone or expired, or whose owner died on this host.
    static func dropStaleReservations(_ db: Database, now: Date = Date()) throws {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT DISTINCT r.run_id, r.owner, l.expires_at FROM budget_reservations r
                LEFT JOIN leases l ON l.run_id = r.run_id AND l.owner = r.owner
                """)
        for row in rows {
            let owner: String = row["owner"]
            let expires: Date? = row["expires_at"]
            guard StaleReservation.isStale(owner: owner, leaseExpiresAt: expires, now: now) else { continue }
            try db.execute(
                sql: "DELETE FROM budget_reservations WHERE run_id = ? AND owner = ?",
                arguments: [row["run_id"] as String, owner])
        }
    }

    /// Spent (ledger rows in `period`), reserved (calls in flight, provider batches out) and, of
    /// the reserved, what other owners' calls in flight hold; of `job` only when given.
    static func budgetUse(_ db: Database, in period: DateInterval, job: String?, owner: String?) throws
        -> BudgetUse
    {
        try budgetSpent(db, in: period, job: job, adding: budgetHeld(db, job: job, owner: owner))
    }

    /// `held` with what the ledger says was spent in `period` (of `job` only when given).
    static func budgetSpent(_ db: Database, in period: DateInterval, job: String?, adding held: BudgetUse)
        throws -> BudgetUse
    {
        var use = held
        let jobFilter = job == nil ? "" : " AND job = ?"
        let spent = try Row.fetchOne(
            db,
            sql: """
                SELECT TOTAL(dollars) AS dollars,
                TOTAL(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens) AS tokens
                FROM ledger WHERE at >= ? AND at < ?\(jobFilter)
                """, arguments: StatementArguments([period.start, period.end] + (job.map { [$0] } ?? [])))
        use.spentDollars = spent?["dollars"] ?? 0
        use.spentTokens = Int(spent?["tokens"] as Double? ?? 0)
        return use
    }

    /// What is held now, whatever the period: calls in flight (and, of them, other owners'), and
    /// provider batches not yet collected; of `job` only when given.
    static func budgetHeld(_ db: Database, job: String?, owner: String?) throws -> BudgetUse {
        var use = BudgetUse()
        let jobFilter = job == nil ? "" : " AND job = ?"
        let calls = try Row.fetchOne(
            db,
            sql: """
                SELECT TOTAL(dollars) AS dollars, TOTAL(tokens) AS tokens,
                TOTAL(dollars) FILTER (WHERE owner IS NOT ?) AS other_dollars,
                TOTAL(tokens) FILTER (WHERE owner IS NOT ?) AS other_tokens
                FROM budget_reservations WHERE 1\(jobFilter)
                """, arguments: StatementArguments([owner, owner] + (job.map { [$0] } ?? [])))
        let batches = try Row.fetchOne(
            db,
            sql: """
                SELECT TOTAL(b.worst_dollars) AS dollars,
                TOTAL(b.worst_input_tokens + b.worst_output_tokens) AS tokens
                FROM provider_batches b JOIN runs r ON r.id = b.run_id
                WHERE b.state IN \(SQLStates.openBatches)\(job == nil ? "" : " AND r.job = ?")
                """, arguments: StatementArguments(job.map { [$0] } ?? []))
        use.inFlightDollars = calls?["other_dollars"] ?? 0
        use.inFlightTokens = Int(calls?["other_tokens"] as Double? ?? 0)
        use.reservedDollars = (calls?["dollars"] ?? 0) + (batches?["dollars"] ?? 0)
        use.reservedTokens = Int(calls?["tokens"] as Double? ?? 0) + Int(batches?["tokens"] as Double? ?? 0)
        return use
    }
}
