import GRDB

extension StoreMigrations {
    /// v26: the job's answered spec items found by an index (`answeredItems(job:)`, which a feed
    /// run reads to ask only new items), not a scan of every request. `PostgresSchema.version18`
    /// is the same.
    static func indexAnsweredItems(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE INDEX requests_answered_by_job ON requests (job, item_id)
                WHERE source = 'spec' AND state = 'done'
                """)
    }
}
