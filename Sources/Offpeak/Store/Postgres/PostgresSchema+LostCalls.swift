extension PostgresSchema {
    /// Version 20: calls in flight written down before they are sent, and the ledger's rows of
    /// those lost with their process (`LostCalls`), as SQLite's v28.
    ///
    /// The text is frozen with the version, as a migration's is.
    static let version20: [String] = [
        """
        ALTER TABLE budget_reservations ADD COLUMN provider text, ADD COLUMN model text,
            ADD COLUMN tier text NOT NULL DEFAULT '', ADD COLUMN downgraded boolean NOT NULL DEFAULT false,
            ADD COLUMN items bigint NOT NULL DEFAULT 0, ADD COLUMN input_tokens bigint NOT NULL DEFAULT 0,
            ADD COLUMN output_tokens bigint NOT NULL DEFAULT 0,
            ADD COLUMN expected_dollars double precision NOT NULL DEFAULT 0,
            ADD COLUMN unpriced boolean NOT NULL DEFAULT false,
            ADD COLUMN search_requests bigint NOT NULL DEFAULT 0,
            ADD COLUMN audit boolean NOT NULL DEFAULT false, ADD COLUMN flex boolean NOT NULL DEFAULT false
        """,
        "ALTER TABLE ledger ADD COLUMN lost boolean NOT NULL DEFAULT false",
        "CREATE INDEX ledger_lost ON ledger (id) WHERE lost",
    ]
}
