/// Version 16 of the PostgreSQL store: calls made with flex processing, as the SQLite store's v23
/// marks them (`StoreMigrations.markFlexCalls`).
///
/// The text is frozen with the version, as a migration's is.
extension PostgresSchema {
    static let version16: [String] = [
        "ALTER TABLE ledger ADD COLUMN flex boolean NOT NULL DEFAULT false",
        "CREATE INDEX ledger_flex ON ledger (id) WHERE flex",
    ]
}
