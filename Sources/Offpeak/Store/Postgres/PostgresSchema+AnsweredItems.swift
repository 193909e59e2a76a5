extension PostgresSchema {
    /// Version 18: the job's answered spec items found by an index (`answeredItems(job:)`, which a
    /// feed run reads to ask only new items), not a scan of every request; SQLite's v26 is the same.
    static let version18: [String] = [
        """
        CREATE INDEX requests_answered_by_job ON requests (job, item_id)
        WHERE source = 'spec' AND state = 'done'
        """
    ]
}

extension PostgresSchema {
    /// Version 19: retention (`RetentionRules`): `runs.pruned_at` and `answered_items`, as SQLite's
    /// v27.
    static let version19: [String] = [
        "ALTER TABLE runs ADD COLUMN pruned_at timestamptz",
        """
        CREATE TABLE answered_items (
            job text NOT NULL, item_id text NOT NULL, PRIMARY KEY (job, item_id))
        """,
        """
        CREATE INDEX runs_finished ON runs (updated_at) WHERE pruned_at IS NULL
            AND state IN ('completed', 'failed', 'canceled')
        """,
    ]
}
