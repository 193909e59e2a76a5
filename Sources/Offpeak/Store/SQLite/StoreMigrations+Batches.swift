import GRDB

/// v7: provider batches as the batch lane keeps them (issue 12).
///
/// v1's `provider_batches` was never written (no code inserted into it), so it is dropped and made
/// again in the shape the lane needs: a batch is committed `preparing`, with its items and their
/// `custom_id`s, before the call that creates it, so a process killed at any moment leaves a row to
/// reconcile; the provider's id is stored right after. Each item's `outcome` is set in the same
/// transaction as its result and ledger row, so collecting the same results twice books nothing.
extension StoreMigrations {
    static func createProviderBatches(_ db: Database) throws {
        // Never written before v7, so always empty; a row here would be someone's data: refuse, don't drop.
        let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM provider_batches") ?? 0
        guard rows == 0 else {
            throw OffpeakError(
                .ioError, "the store's provider_batches table holds \(rows) rows offpeak did not write",
                cause: "v7 remakes that table and keeps no row of it")
        }
        try db.drop(table: "provider_batches")
        try db.create(table: "provider_batches") { t in
            t.primaryKey("id", .text)
            t.column("run_id", .text).notNull().references("runs", onDelete: .cascade)
            t.column("provider", .text).notNull()
            t.column("model", .text).notNull()
            t.column("remote_id", .text)
            t.column("state", .text).notNull()
            t.column("prepared_at", .datetime).notNull()
            t.column("submitted_at", .datetime)
            t.column("ended_at", .datetime)
            t.column("collected_at", .datetime)
            t.column("next_poll_at", .datetime)
            t.column("worst_dollars", .double).notNull().defaults(to: 0)
            t.column("error", .text)
        }
        try db.create(table: "batch_items") { t in
            t.column("batch_id", .text).notNull().references("provider_batches", onDelete: .cascade)
            t.column("request_id", .text).notNull().references("requests", onDelete: .cascade)
            t.column("custom_id", .text).notNull()
            t.column("outcome", .text)
            t.primaryKey(["batch_id", "custom_id"])
        }
        // Partial indexes: a query uses one only when it spells the condition the same way
        // (`Store.batchesToPoll`, `Store.preparingBatches`).
        try db.execute(
            sql: """
                CREATE INDEX provider_batches_by_run ON provider_batches (run_id, prepared_at);
                CREATE INDEX provider_batches_to_poll ON provider_batches (next_poll_at)
                WHERE state IN ('submitted', 'ended');
                CREATE INDEX provider_batches_preparing ON provider_batches (prepared_at)
                WHERE state = 'preparing';
                CREATE INDEX batch_items_by_request ON batch_items (request_id);
                """)
    }
}

extension StoreMigrations {
    /// v8: one provider request of a batch (one `custom_id`) may carry a batched prompt of several
    /// items, so `batch_items` is keyed by request, each with its `slot` in the prompt; and a batch
    /// keeps what the provider last said of it (its status, counts and expiry) for `status` and
    /// `offpeak batches`, which read the store and never call the provider.
    static func carryBatchedPrompts(_ db: Database) throws {
        // No released version wrote these tables (v7 landed with the lane unbuilt): a row is refused.
        let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM batch_items") ?? 0
        guard rows == 0 else {
            throw OffpeakError(
                .ioError, "the store's batch_items table holds \(rows) rows offpeak did not write",
                cause: "v8 remakes that table and keeps no row of it")
        }
        try db.drop(table: "batch_items")
        try db.create(table: "batch_items") { t in
            t.column("batch_id", .text).notNull().references("provider_batches", onDelete: .cascade)
            t.column("request_id", .text).notNull().references("requests", onDelete: .cascade)
            t.column("custom_id", .text).notNull()
            t.column("slot", .integer).notNull().defaults(to: 0)
            t.column("outcome", .text)
            t.primaryKey(["batch_id", "request_id"])
        }
        try db.execute(
            sql: """
                CREATE INDEX batch_items_by_custom_id ON batch_items (batch_id, custom_id, slot);
                CREATE INDEX batch_items_by_request ON batch_items (request_id);
                """)
        try db.alter(table: "provider_batches") { t in
            t.add(column: "requests", .integer).notNull().defaults(to: 0)
            t.add(column: "items", .integer).notNull().defaults(to: 0)
            t.add(column: "remote_status", .text)
            t.add(column: "counts", .text)
            t.add(column: "expires_at", .datetime)
            t.add(column: "polls", .integer).notNull().defaults(to: 0)
            t.add(column: "worst_input_tokens", .integer).notNull().defaults(to: 0)
            t.add(column: "worst_output_tokens", .integer).notNull().defaults(to: 0)
        }
    }
}

extension StoreMigrations {
    /// v12: a batch remembers its polls that failed in a row for a reason that is not transient (a
    /// 4xx, a results URL that is not one, results that cannot be read) and the last reason,
    /// redacted, so `status`, `batches` and `queue` can say why its items are not collected while
    /// the ticks keep asking (issue 21).
    static func recordPollFailures(_ db: Database) throws {
        try db.alter(table: "provider_batches") { t in
            t.add(column: "poll_failures", .integer).notNull().defaults(to: 0)
            t.add(column: "poll_error", .text)
        }
    }
}
