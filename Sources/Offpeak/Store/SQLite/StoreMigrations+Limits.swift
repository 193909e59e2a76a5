import GRDB

extension StoreMigrations {
    /// v16: the providers' limits shared by every process on the store (`LimitStore`): one row per
    /// grant of requests and tokens (a block of them, or one call holding its slot), kept a minute
    /// after its `send_by`. `PostgresSchema.version8` makes the same table.
    static func shareLimits(_ db: Database) throws {
        try db.create(table: "limit_grants") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("key", .text).notNull()
            t.column("owner", .text).notNull()
            t.column("host", .text).notNull().defaults(to: "")
            t.column("requests", .integer).notNull()
            t.column("tokens", .integer).notNull()
            t.column("slots", .integer).notNull()
            t.column("granted_at", .datetime).notNull()
            t.column("send_by", .datetime).notNull()
            t.column("expires_at", .datetime).notNull()
        }
        try db.create(index: "limit_grants_by_provider", on: "limit_grants", columns: ["key", "send_by"])
    }
}
