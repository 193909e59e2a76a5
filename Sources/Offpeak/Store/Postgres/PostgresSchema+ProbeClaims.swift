extension PostgresSchema {
    /// Version 21: claims on probing a batch size (`AuditStore+Probes`), as SQLite's v29; and
    /// PostgreSQL's own, the ticks' and copies' lock rows (`PostgresStore+Locks`), which replace
    /// session advisory locks a pooler in transaction mode cannot keep (SQLite's tick lock is the
    /// workspace's file).
    static let version21: [String] = [
        """
        CREATE TABLE probe_claims (
            job text NOT NULL, provider text NOT NULL, model text NOT NULL, size bigint NOT NULL,
            owner text NOT NULL, host text NOT NULL, expires_at timestamptz NOT NULL,
            PRIMARY KEY (job, provider, model, size))
        """,
        """
        CREATE TABLE store_locks (
            name text PRIMARY KEY, owner text NOT NULL, host text NOT NULL, expires_at timestamptz NOT NULL)
        """,
    ]
}
