import GRDB

extension StoreMigrations {
    /// v14: the host that wrote each lease, budget reservation and ledger row (`HostName`; '' on
    /// rows written before), and the hosts seen: each one's offpeak version, when it was first seen,
    /// its last tick's start, end and exit status, and the conditions it read then (`HostRecord`).
    /// `PostgresSchema.version6` makes the same columns, so a store copies row for row.
    static func recordHosts(_ db: Database) throws {
        for table in ["leases", "budget_reservations", "ledger"] {
            try db.alter(table: table) { t in t.add(column: "host", .text).notNull().defaults(to: "") }
        }
        try db.create(table: "hosts") { t in
            t.primaryKey("name", .text)
            t.column("version", .text).notNull()
            t.column("first_seen_at", .datetime).notNull()
            t.column("tick_started_at", .datetime).notNull()
            t.column("tick_ended_at", .datetime)
            t.column("tick_status", .integer)
            t.column("conditions", .text).notNull().defaults(to: "")
        }
    }

    /// v18: the host whose conditions deferred each job (`deferred`), and the host that prepared
    /// and sent each provider batch (`provider_batches`), for `queue` and `batches` to name them;
    /// '' on rows written before. `PostgresSchema.version11` adds the same columns.
    static func recordDeferringAndBatchHosts(_ db: Database) throws {
        for table in ["deferred", "provider_batches"] {
            try db.alter(table: table) { t in t.add(column: "host", .text).notNull().defaults(to: "") }
        }
    }
}
