/// Version 7 of the PostgreSQL store: the spec each host last ran or ticked each job with, as the
/// SQLite store's v15 has it (`StoreMigrations.recordJobSpecs`).
///
/// The text is frozen with the version, as a migration's is.
extension PostgresSchema {
    static let version7: [String] = [
        """
        CREATE TABLE job_specs (
            job text NOT NULL,
            host text NOT NULL,
            spec_hash text NOT NULL,
            spec text NOT NULL,
            seen_at timestamptz NOT NULL,
            PRIMARY KEY (job, host))
        """
    ]
}
