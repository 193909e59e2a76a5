/// Version 13 of the PostgreSQL store: the web searches each call ran and the search results each
/// answer cited, as the SQLite store's v20 has them (`StoreMigrations.countSearches`).
///
/// The text is frozen with the version, as a migration's is.
extension PostgresSchema {
    static let version13: [String] = [
        "ALTER TABLE ledger ADD COLUMN search_requests bigint NOT NULL DEFAULT 0",
        "CREATE INDEX ledger_searches ON ledger (model, search_requests) WHERE search_requests > 0",
        "ALTER TABLE results ADD COLUMN citations text",
    ]
}
