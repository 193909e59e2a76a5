import GRDB

extension StoreMigrations {
    /// v23 (issue 26): a call made live with flex processing (`CallLane.flex`) is marked, as a
    /// provider batch's is (`batch_api`): `costs` shows the flex lane and what it saved. The
    /// partial index finds whether any call went flex without reading the ledger.
    /// `PostgresSchema.version16` adds the same.
    static func markFlexCalls(_ db: Database) throws {
        try db.alter(table: "ledger") { t in
            t.add(column: "flex", .boolean).notNull().defaults(to: false)
        }
        try db.execute(sql: "CREATE INDEX ledger_flex ON ledger (id) WHERE flex")
    }
}
