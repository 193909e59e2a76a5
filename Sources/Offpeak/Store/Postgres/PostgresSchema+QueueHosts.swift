/// Version 11 of the PostgreSQL store: the host whose conditions deferred each job and the host
/// that sent each provider batch, as the SQLite store's v18 has them
/// (`StoreMigrations.recordDeferringAndBatchHosts`); '' on rows written before.
///
/// A column added with a constant default is only noted in the catalog: no table is rewritten.
/// The text is frozen with the version, as a migration's is.
extension PostgresSchema {
    static let version11: [String] = [
        "ALTER TABLE deferred ADD COLUMN host text NOT NULL DEFAULT ''",
        "ALTER TABLE provider_batches ADD COLUMN host text NOT NULL DEFAULT ''",
    ]
}
