import GRDB

extension StoreMigrations {
    /// v17: claims on rounds of a run's requests (`LeaseStore.claimRound`): one row per run and
    /// owner, covering the positions of the round the owner is answering until it expires.
    /// `PostgresSchema.version10` makes the same table. Like `limit_grants`, a store copy leaves
    /// the rows out (`StoreCopy.tables`): they are the calls in flight of the source's processes.
    static func createClaims(_ db: Database) throws {
        try db.create(table: "claims") { t in
            t.column("run_id", .text).notNull()
            t.column("owner", .text).notNull()
            t.column("host", .text).notNull()
            t.column("first_position", .integer).notNull()
            t.column("last_position", .integer).notNull()
            t.column("expires_at", .datetime).notNull()
            t.primaryKey(["run_id", "owner"])
        }
    }
}
