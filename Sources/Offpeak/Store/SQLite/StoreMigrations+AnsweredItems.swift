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

extension StoreMigrations {
    /// v27: retention (`RetentionRules`): `runs.pruned_at`, when a finished run's requests and
    /// results were removed, and `answered_items`, the items (from a spec, not steps) such runs
    /// answered, which `answeredItems(job:)` still reads so a feed's entry is never asked twice.
    /// `PostgresSchema.version19` is the same.
    static func keepAnsweredItemsOfPrunedRuns(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE runs ADD COLUMN pruned_at DATETIME;
                CREATE TABLE answered_items (
                    job TEXT NOT NULL, item_id TEXT NOT NULL, PRIMARY KEY (job, item_id));
                CREATE INDEX runs_finished ON runs (updated_at) WHERE pruned_at IS NULL
                    AND state IN ('completed', 'failed', 'canceled');
                """)
    }
}
