/// Version 6 of the PostgreSQL store: the host that wrote each lease, budget reservation and ledger
/// row, and the hosts seen, as the SQLite store's v14 has them (`StoreMigrations.recordHosts`).
///
/// A column added with a constant default is only noted in the catalog: the ledger is not rewritten.
/// The text is frozen with the version, as a migration's is.
extension PostgresSchema {
    static let version6: [String] = [
        "ALTER TABLE leases ADD COLUMN host text NOT NULL DEFAULT ''",
        "ALTER TABLE budget_reservations ADD COLUMN host text NOT NULL DEFAULT ''",
        "ALTER TABLE ledger ADD COLUMN host text NOT NULL DEFAULT ''",
        """
        CREATE TABLE hosts (
            name text PRIMARY KEY,
            version text NOT NULL,
            first_seen_at timestamptz NOT NULL,
            tick_started_at timestamptz NOT NULL,
            tick_ended_at timestamptz,
            tick_status integer,
            conditions text NOT NULL DEFAULT '')
        """,
    ]
}
