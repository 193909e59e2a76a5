import GRDB

extension StoreMigrations {
    /// v28: every call in flight is written down before it is sent (`LostCalls`): its budget
    /// reservation, now made for every call, carries the ledger row the call would leave if its
    /// process died with it (a NULL `model` marks a provider batch's request, which is no call);
    /// `ledger.lost` marks such rows, booked at the estimated price. `PostgresSchema.version20` is
    /// the same.
    static func writeDownCallsInFlight(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE budget_reservations ADD COLUMN provider TEXT;
                ALTER TABLE budget_reservations ADD COLUMN model TEXT;
                ALTER TABLE budget_reservations ADD COLUMN tier TEXT NOT NULL DEFAULT '';
                ALTER TABLE budget_reservations ADD COLUMN downgraded BOOLEAN NOT NULL DEFAULT 0;
                ALTER TABLE budget_reservations ADD COLUMN items INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE budget_reservations ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE budget_reservations ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE budget_reservations ADD COLUMN expected_dollars DOUBLE NOT NULL DEFAULT 0;
                ALTER TABLE budget_reservations ADD COLUMN unpriced BOOLEAN NOT NULL DEFAULT 0;
                ALTER TABLE budget_reservations ADD COLUMN search_requests INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE budget_reservations ADD COLUMN audit BOOLEAN NOT NULL DEFAULT 0;
                ALTER TABLE budget_reservations ADD COLUMN flex BOOLEAN NOT NULL DEFAULT 0;
                ALTER TABLE ledger ADD COLUMN lost BOOLEAN NOT NULL DEFAULT 0;
                CREATE INDEX ledger_lost ON ledger (id) WHERE lost;
                """)
    }
}
