import GRDB

extension StoreMigrations {
    /// v19: answers kept for reuse (issue 24): an answer saved by a job with `reuse: unchanged` is
    /// reused while its prompt stays byte-identical, whatever its TTL says, so `cache purge
    /// --expired` keeps it (`reuse` = 1). `PostgresSchema.version12` adds the same column.
    static func markReusedAnswers(_ db: Database) throws {
        try db.alter(table: "cache_entries") { t in
            t.add(column: "reuse", .boolean).notNull().defaults(to: false)
        }
    }
}
