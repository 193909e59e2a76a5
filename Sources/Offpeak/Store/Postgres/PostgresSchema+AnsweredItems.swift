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
