import GRDB

extension StoreMigrations {
    /// v20 (issue 24): web searches. Each ledger row counts the searches its call ran
    /// (`search_requests`, already in its `dollars`); a partial index holds the rows that ran any,
    /// so `costs` sums them without reading the ledger of a workspace that never searched. Each
    /// result keeps the search results its answer cited (`results.citations`, `SearchCitation`).
    /// `PostgresSchema.version13` adds the same.
    static func countSearches(_ db: Database) throws {
        try db.alter(table: "ledger") { t in
            t.add(column: "search_requests", .integer).notNull().defaults(to: 0)
        }
        try db.execute(
            sql: """
                CREATE INDEX ledger_searches ON ledger (model, search_requests) WHERE search_requests > 0
                """)
        try db.alter(table: "results") { t in t.add(column: "citations", .text) }
    }
}
