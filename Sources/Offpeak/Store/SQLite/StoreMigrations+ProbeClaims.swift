import GRDB

extension StoreMigrations {
    /// v29: claims on probing a batch size (`AuditStore+Probes`), one row a size being probed.
    /// `PostgresSchema.version21` is the same.
    static func createProbeClaims(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE probe_claims (
                    job TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, size INTEGER NOT NULL,
                    owner TEXT NOT NULL, host TEXT NOT NULL, expires_at DATETIME NOT NULL,
                    PRIMARY KEY (job, provider, model, size))
                """)
    }
}
