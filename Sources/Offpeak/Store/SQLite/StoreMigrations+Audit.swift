import GRDB

extension StoreMigrations {
    /// v21 (issue 25): the batch audit. Each ledger row says whether its call asked a batched item
    /// again alone (`audit`, real spend with no naive call beside it); a partial index holds the
    /// rows that did, so `auditSpend` sums them without reading the ledger of a workspace that never
    /// audits. Each item audited is a row of `audit_items` (`AuditRow`: where it sat in its prompt,
    /// both answers, whether they agreed, which one it kept, the audit call's ledger row), and what
    /// the audit learned of each job's batched prompts to each model is one record in
    /// `audit_records` (`AuditRecord`, as JSON). `PostgresSchema.version14` adds the same.
    static func recordAudits(_ db: Database) throws {
        try db.alter(table: "ledger") { t in
            t.add(column: "audit", .boolean).notNull().defaults(to: false)
        }
        try db.execute(sql: "CREATE INDEX ledger_audits ON ledger (job) WHERE audit")
        try db.create(table: "audit_items") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("at", .datetime).notNull()
            t.column("job", .text).notNull()
            t.column("run_id", .text).notNull()
            t.column("request_id", .text).notNull()
            t.column("item_id", .text).notNull()
            t.column("provider", .text).notNull()
            t.column("model", .text).notNull()
            t.column("batch_size", .integer).notNull()
            t.column("position", .integer).notNull()
            t.column("agreed", .boolean).notNull()
            t.column("similarity", .double).notNull()
            t.column("batched_answer", .text).notNull()
            t.column("single_answer", .text).notNull()
            t.column("kept_single", .boolean).notNull()
            t.column("ledger_id", .integer)
            t.column("host", .text).notNull().defaults(to: "")
        }
        try db.create(index: "audit_items_by_job", on: "audit_items", columns: ["job", "at"])
        try db.create(table: "audit_records") { t in
            t.column("job", .text).notNull()
            t.column("provider", .text).notNull()
            t.column("model", .text).notNull()
            t.column("record", .text).notNull()  // AuditRecord, as JSON
            t.column("updated_at", .datetime).notNull()
            t.primaryKey(["job", "provider", "model"])
        }
    }
}

extension StoreMigrations {
    /// v22 (issue 25): the batch lane's audit. An audited item of a batched prompt is also asked
    /// alone in the same provider batch, under its own custom id; `batch_audits` holds those custom
    /// ids (their item, the prompt's size, the item's place) and each one's outcome, set in the
    /// transaction that books the audit, so collecting a batch twice books each audit once. Audited
    /// items are found by request (`uncheckedAnswers`). `PostgresSchema.version15` adds the same.
    static func auditBatches(_ db: Database) throws {
        try db.create(table: "batch_audits") { t in
            t.column("batch_id", .text).notNull().references("provider_batches", onDelete: .cascade)
            t.column("custom_id", .text).notNull()
            t.column("request_id", .text).notNull().references("requests", onDelete: .cascade)
            t.column("batch_size", .integer).notNull()
            t.column("position", .integer).notNull()
            t.column("outcome", .text)
            t.primaryKey(["batch_id", "custom_id"])
        }
        try db.create(index: "audit_items_by_request", on: "audit_items", columns: ["request_id"])
    }
}

extension StoreMigrations {
    /// v24 (issue 44): the audits a batched call's commit leaves to make (`QueuedAudit`), one row
    /// per item to ask alone, written with the call's answers and deleted by the audit's commit (or
    /// when the answer is asked again), so a kill between the two loses no audit: the run's next
    /// pass makes it. `PostgresSchema.version17` adds the same.
    static func queueAudits(_ db: Database) throws {
        try db.create(table: "audit_queue") { t in
            t.primaryKey("request_id", .text).references("requests", onDelete: .cascade)
            t.column("run_id", .text).notNull()
            t.column("batch_size", .integer).notNull()
            t.column("position", .integer).notNull()
            t.column("probe", .boolean).notNull()
        }
        try db.create(index: "audit_queue_by_run", on: "audit_queue", columns: ["run_id"])
    }
}
