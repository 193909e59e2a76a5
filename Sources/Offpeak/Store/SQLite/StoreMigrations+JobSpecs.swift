import GRDB

extension StoreMigrations {
    /// v15: the spec each host last ran or ticked each job with (`JobSpecRecord`).
    /// `PostgresSchema.version7` makes the same table, so a store copies row for row.
    static func recordJobSpecs(_ db: Database) throws {
        try db.create(table: "job_specs") { t in
            t.column("job", .text).notNull()
            t.column("host", .text).notNull()
            t.column("spec_hash", .text).notNull()
            t.column("spec", .text).notNull()
            t.column("seen_at", .datetime).notNull()
            t.primaryKey(["job", "host"])
        }
    }
}
