/// Version 12 of the PostgreSQL store: answers kept for reuse while their prompt is unchanged, and
/// the research sources each request was built from, as the SQLite store's v19 has them
/// (`StoreMigrations.markReusedAnswers`).
///
/// The text is frozen with the version, as a migration's is.
extension PostgresSchema {
    static let version12: [String] = [
        "ALTER TABLE cache_entries ADD COLUMN reuse boolean NOT NULL DEFAULT false",
        "ALTER TABLE requests ADD COLUMN sources text",
    ]
}
