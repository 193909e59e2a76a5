import Foundation

/// The ledger and budget reservations: what was spent (by run, by day, by model, by lane), what a budget holds, and what past calls say about latency and answer length.
///
/// One role of the store seam (`Store`), played by both engines: SQLite (`SQLiteStore`) and
/// PostgreSQL (`PostgresEngine`). Both reserve under one writer: SQLite's write transaction, PostgreSQL's
/// transaction advisory lock on the budgets (`PostgresEngine.lockBudgets`).
protocol LedgerStore: AnyObject, Sendable {
    /// The ledger by lane and model, or nil when the workspace never made a provider batch nor a
    /// flex call (then every call was live, and the ledger is not read again; flex calls are found
    /// by a partial index). The ledger has no index on `batch_api`: this reads its rows once.
    func spendByLane() throws(OffpeakError) -> [LaneModelSpend]?

    /// Reserves `ask` against `limits`.
    /// - Returns: the reservation's id, or why a budget refused it (nothing is reserved then).
    func reserveBudget(_ ask: BudgetAsk, limits: BudgetLimits, now: Date) throws(OffpeakError)
        -> Result<Int64, BudgetRefusal>

    /// Books every call in flight whose process is gone as lost in flight (`LostCalls`), and drops
    /// the other reservations no one holds any more.
    func bookLostCalls() throws(OffpeakError)

    /// Gives a reservation back without a ledger row (the batch it held for is now counted).
    func releaseReservation(_ id: Int64) throws(OffpeakError)

    /// What the workspace (or `job`) has spent and holds in `period`, for `status`.
    func budgetUse(in period: DateInterval, job: String?) throws(OffpeakError) -> BudgetUse

    /// Spend grouped by the local calendar day (in `calendar`'s time zone) its calls were made,
    /// newest day first.
    ///
    /// SQLite knows no local time zone, so each day's bounds are computed here (`LedgerDay.costs`,
    /// which both engines walk: a day around a DST change is 23 or 25 hours long, one whose midnight
    /// is skipped starts at 01:00) and its rows are summed in SQL over the ledger's time index, which
    /// covers every summed column: no row is read or decoded one by one. Only days with calls are
    /// visited: after each day, the next is the one holding the first row at or after its end. Rows
    /// add up in the order of `at`, then `id`, as they always have.
    /// With `since` (a local midnight), only the days from it on.
    func costsByDay(calendar: Calendar, since: Date?) throws(OffpeakError) -> [CostLine]

    /// Output tokens per answered item, measured over the newest `calls` paid calls to `model`
    /// (of `job` only, when given): nil when the ledger has none.
    func outputPerItem(model: String, job: String?, calls: Int) throws(OffpeakError)
        -> (tokens: Double, items: Int)?

    func latency(model: String) throws(OffpeakError) -> LatencyEstimate?

    /// What one run has spent so far: what its budget is checked against before every call. One
    /// row of `run_spend`, which the ledger's triggers keep (see `StoreMigrations.createSpendCounters`),
    /// however many calls the run has made.
    func spend(runID: String) throws(OffpeakError) -> Spend

    /// The same, summed over the run's ledger rows (what the counter must equal).
    func recountSpend(runID: String) throws(OffpeakError) -> Spend

    /// Spend since `start` (e.g. local midnight), over every job.
    func spend(since start: Date) throws(OffpeakError) -> Spend

    /// Models whose calls are in the ledger unpriced (no price known when they were made), by name.
    func unpricedModels() throws(OffpeakError) -> [String]

    /// The calls booked as lost in flight (`LostCalls`) and their estimated dollars.
    func lostCalls() throws(OffpeakError) -> (calls: Int, dollars: Double)

    /// Web searches in the ledger by model, for the models that ran any (`WebSearch`).
    func searchesByModel() throws(OffpeakError) -> [String: Int]

    /// Spend grouped by job or by model, most expensive first.
    func costs(groupedBy key: CostLine.Key) throws(OffpeakError) -> [CostLine]

    /// The ledger's calls to models whose prices change with the clock, by `key` and the price
    /// window each was billed in (`LedgerSplits`); local days in `calendar`'s time zone.
    func windowShares(by key: WindowKey, calendar: Calendar) throws(OffpeakError) -> [WindowShare]

    /// What waiting for cheaper prices saved, over the whole ledger.
    func waitingSavings() throws(OffpeakError) -> WaitingSavings

    /// Spend by tag (`Tags`), most expensive first (a call with several tags counts under each),
    /// and the spend of every tagged call, each once.
    func costsByTag() throws(OffpeakError) -> (lines: [CostLine], tagged: Spend)

    /// The pruned runs that finished before `cutoff` and whose ledger rows are not rolled up by
    /// day yet (`LedgerRollUp`), oldest first, at most `limit`: through the partial index
    /// `runs_ledger_unrolled`.
    func runsToRollUp(before cutoff: Date, limit: Int) throws(OffpeakError) -> [String]

    /// Rolls the pruned run's ledger rows up by local day (in `calendar`'s time zone), in one
    /// transaction; `dryRun` only counts them (for a run not pruned yet too).
    func rollUpLedger(runID: String, calendar: Calendar, at now: Date, dryRun: Bool)
        throws(OffpeakError) -> LedgerRollUpReport

    /// Every total in one read. Each query reads an index or a small table (run counters, the
    /// deferred queue, the cache's daily counters, provider batches), but the lane split, which
    /// reads the ledger once when the workspace has used the batch lane (as `costs` does).
    func workspaceTotals() throws(OffpeakError) -> WorkspaceTotals
}

extension LedgerStore {
    /// Every day with calls.
    func costsByDay(calendar: Calendar) throws(OffpeakError) -> [CostLine] {
        try costsByDay(calendar: calendar, since: nil)
    }
}

extension LedgerStore {
    func budgetUse(in period: DateInterval) throws(OffpeakError) -> BudgetUse {
        try budgetUse(in: period, job: nil)
    }

    func outputPerItem(model: String, job: String?) throws(OffpeakError) -> (tokens: Double, items: Int)? {
        try outputPerItem(model: model, job: job, calls: 500)
    }
}
