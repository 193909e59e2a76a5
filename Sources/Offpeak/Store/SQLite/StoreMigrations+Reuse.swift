import GRDB

extension StoreMigrations {
    /// v19 (issue 24): answers kept for reuse, an answer saved by a job with `reuse: unchanged` being
    /// reused while its prompt stays byte-identical, whatever its TTL says, so `cache purge --expired`
    /// keeps it (`reuse` = 1); and the research sources each request's prompt was built from
    /// (`requests.sources`, `SourceCitation`), which its item's `index.json` entry cites.
    /// `PostgresSchema.version12` adds the same columns.
    static func markReusedAnswers(_ db: Database) throws {
        try db.alter(table: "cache_entries") { t in
            t.add(column: "reuse", .boolean).notNull().defaults(to: false)
        }
        try db.alter(table: "requests") { t in t.add(column: "sources", .text) }
    }
}
