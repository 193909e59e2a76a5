import GRDB

extension StoreMigrations {
    /// One row per call in flight while a workspace or job budget is set: its worst case, held
    /// against the budgets until its ledger row replaces it (`Store.reserveBudget`). Indexed by job
    /// for a job's `per_day`; the table stays as small as the calls in flight.
    static func createBudgetReservations(_ db: Database) throws {
        try db.create(table: "budget_reservations") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("run_id", .text).notNull()
            t.column("job", .text).notNull().indexed()
            t.column("owner", .text).notNull()
            t.column("dollars", .double).notNull()
            t.column("tokens", .integer).notNull()
            t.column("reserved_at", .datetime).notNull()
        }
    }
}
