import GRDB

/// The tables of the store's first versions (v1 to v13, `SchemaChange.base`).
extension StoreMigrations {
    /// Every call is a ledger row, whatever came of it: `failed` marks one that brought back no
    /// answer (so `status` counts calls made, not only calls answered), `unpriced` one whose model
    /// has no price (its $0 is unknown, not free). A run remembers its latest failures while they
    /// are alike (same text, call after call), which tells a broken configuration or a failing
    /// provider from a bad item, across ticks.
    static func createFailureAccounting(_ db: Database) throws {
        try db.alter(table: "ledger") { t in
            t.add(column: "failed", .boolean).notNull().defaults(to: false)
            t.add(column: "unpriced", .boolean).notNull().defaults(to: false)
        }
        try db.alter(table: "runs") { t in
            t.add(column: "failure_streak", .integer).notNull().defaults(to: 0)
            t.add(column: "failure_text", .text)
            t.add(column: "failure_items", .text)
        }
    }

    /// Runs, one request per item, and each request's result.
    static func createRunTables(_ db: Database) throws {
        try db.create(table: "runs") { t in
            t.primaryKey("id", .text)
            t.column("job", .text).notNull().indexed()
            t.column("kind", .text).notNull()
            t.column("spec_hash", .text).notNull()
            t.column("state", .text).notNull()
            t.column("reason", .text)
            t.column("budget_stop", .text)
            t.column("provider", .text).notNull()
            t.column("model", .text).notNull()
            t.column("tier", .text).notNull()
            t.column("downgraded", .boolean).notNull().defaults(to: false)
            t.column("forced", .boolean).notNull().defaults(to: false)
            t.column("items_total", .integer).notNull().defaults(to: 0)
            t.column("items_done", .integer).notNull().defaults(to: 0)
            t.column("items_failed", .integer).notNull().defaults(to: 0)
            t.column("items_cached", .integer).notNull().defaults(to: 0)
            t.column("created_at", .datetime).notNull()
            t.column("started_at", .datetime)
            t.column("updated_at", .datetime).notNull()
            t.column("finished_at", .datetime)
            t.column("deadline_at", .datetime)
        }
        try db.create(table: "requests") { t in
            t.primaryKey("id", .text)
            t.column("run_id", .text).notNull().references("runs", onDelete: .cascade)
            t.column("job", .text).notNull()
            t.column("item_id", .text).notNull()
            t.column("position", .integer).notNull()
            t.column("source", .text).notNull()
            t.column("client_id", .text)
            t.column("tier", .text).notNull()
            t.column("payload", .text).notNull()
            t.column("cache_key", .text).notNull()
            t.column("state", .text).notNull()
            t.column("attempts", .integer).notNull().defaults(to: 0)
            t.column("next_attempt_at", .datetime)
            t.column("error", .text)
            t.column("created_at", .datetime).notNull()
            t.column("updated_at", .datetime).notNull()
            t.uniqueKey(["run_id", "item_id"])
        }
        try db.create(
            index: "requests_by_run_state", on: "requests", columns: ["run_id", "state", "position"])
        try db.create(table: "results") { t in
            t.primaryKey("request_id", .text).references("requests", onDelete: .cascade)
            t.column("run_id", .text).notNull().indexed()
            t.column("text", .text).notNull()
            t.column("finish_reason", .text).notNull()
            t.column("model", .text).notNull()
            t.column("from_cache", .boolean).notNull().defaults(to: false)
            t.column("ledger_id", .integer)
            t.column("input_tokens", .integer).notNull()
            t.column("output_tokens", .integer).notNull()
            t.column("dollars", .double).notNull()
            t.column("created_at", .datetime).notNull()
        }
    }

    /// What every call cost, and the cache that makes calls free.
    static func createAccountingTables(_ db: Database) throws {
        try db.create(table: "ledger") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("at", .datetime).notNull().indexed()
            t.column("job", .text).notNull().indexed()
            t.column("run_id", .text).indexed()
            t.column("provider", .text).notNull()
            t.column("model", .text).notNull()
            t.column("tier", .text).notNull()
            t.column("downgraded", .boolean).notNull().defaults(to: false)
            t.column("items", .integer).notNull()
            t.column("input_tokens", .integer).notNull()
            t.column("output_tokens", .integer).notNull()
            t.column("cache_read_tokens", .integer).notNull()
            t.column("cache_write_tokens", .integer).notNull()
            t.column("dollars", .double).notNull()
            t.column("naive_dollars", .double).notNull()
            t.column("batch_api", .boolean).notNull().defaults(to: false)
            t.column("cache_hit", .boolean).notNull().defaults(to: false)
            t.column("usage_estimated", .boolean).notNull().defaults(to: false)
            t.column("latency_ms", .integer).notNull().defaults(to: 0)
        }
        try db.create(table: "cache_entries") { t in
            t.primaryKey("key", .text)
            t.column("kind", .text).notNull()
            t.column("job", .text)
            t.column("provider", .text)
            t.column("model", .text)
            t.column("url", .text)
            t.column("created_at", .datetime).notNull()
            t.column("expires_at", .datetime).notNull().indexed()
            t.column("last_access_at", .datetime).notNull().indexed()
            t.column("hits", .integer).notNull().defaults(to: 0)
            t.column("raw_bytes", .integer).notNull()
            t.column("stored_bytes", .integer).notNull()
            t.column("payload", .blob).notNull()
            t.column("etag", .text)
            t.column("last_modified", .text)
        }
        try db.create(table: "model_latency") { t in
            t.primaryKey("model", .text)
            t.column("ms_per_call", .double).notNull()
            t.column("ms_per_output_token", .double).notNull()
            t.column("samples", .integer).notNull()
            t.column("updated_at", .datetime).notNull()
        }
    }

    /// Cache hits and misses per local day and kind (answer, source); indexes for purging by job and
    /// for the size cap; each request's cache policy: `default`, `no-cache` (neither read nor write
    /// the cache) or `refresh` (ask again and overwrite).
    ///
    /// The access index covers what the size cap, eviction and `cache stats` read, so they scan it
    /// instead of every payload; it replaces v1's index on `last_access_at` alone.
    static func createCacheCounters(_ db: Database) throws {
        try db.create(table: "cache_counters") { t in
            t.column("day", .text).notNull()
            t.column("kind", .text).notNull()
            t.column("hits", .integer).notNull().defaults(to: 0)
            t.column("misses", .integer).notNull().defaults(to: 0)
            t.primaryKey(["day", "kind"])
        }
        try db.create(index: "cache_entries_by_job", on: "cache_entries", columns: ["job"])
        try db.drop(index: "cache_entries_on_last_access_at")
        try db.create(
            index: "cache_entries_by_access", on: "cache_entries",
            columns: ["last_access_at", "stored_bytes", "raw_bytes", "expires_at", "created_at"])
        try db.alter(table: "requests") { t in
            t.add(column: "cache_policy", .text).notNull().defaults(to: "default")
        }
    }

    /// Durability and scheduling: checkpoints, leases, the deferred queue, provider batches, schedules.
    static func createSchedulingTables(_ db: Database) throws {
        try db.create(table: "checkpoints") { t in
            t.primaryKey("run_id", .text).references("runs", onDelete: .cascade)
            t.column("segment", .integer).notNull()
            t.column("done", .integer).notNull()
            t.column("last_request_id", .text)
            t.column("updated_at", .datetime).notNull()
        }
        try db.create(table: "leases") { t in
            t.primaryKey("run_id", .text).references("runs", onDelete: .cascade)
            t.column("owner", .text).notNull()
            t.column("acquired_at", .datetime).notNull()
            t.column("heartbeat_at", .datetime).notNull()
            t.column("expires_at", .datetime).notNull()
        }
        try db.create(table: "deferred") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("job", .text).notNull().indexed()
            t.column("run_id", .text).references("runs", onDelete: .cascade)
            t.column("reasons", .text).notNull()
            t.column("deferred_at", .datetime).notNull()
            t.column("checked_at", .datetime).notNull()
            t.column("released_at", .datetime)
        }
        try db.create(table: "provider_batches") { t in
            t.primaryKey("id", .text)
            t.column("run_id", .text).references("runs", onDelete: .cascade)
            t.column("provider", .text).notNull()
            t.column("remote_id", .text).notNull()
            t.column("state", .text).notNull()
            t.column("request_ids", .text).notNull()
            t.column("submitted_at", .datetime).notNull()
            t.column("collected_at", .datetime)
        }
        try db.create(table: "schedules") { t in
            t.primaryKey("job", .text)
            t.column("expression", .text).notNull()
            t.column("last_fired_at", .datetime)
            t.column("next_due_at", .datetime)
        }
    }
}
