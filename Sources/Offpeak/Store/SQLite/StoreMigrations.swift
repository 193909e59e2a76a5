import GRDB

/// The SQLite engine's versions of the schema, registered change by change (`SchemaChange`). Later
/// work adds migrations; a registered one is never edited.
enum StoreMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for change in SchemaChange.allCases { register(change, in: &migrator) }
        return migrator
    }

    /// Registers the versions that make `change` (`SchemaChange`), in order; an engine's own version
    /// goes with the change it follows (v25, the cache's rows found by id, with `queuedAudits`).
    static func register(_ change: SchemaChange, in migrator: inout DatabaseMigrator) {
        switch change {
        case .base:
            migrator.registerMigration(
                "v1: runs, requests, results, ledger, checkpoints, leases, queue, cache"
            ) {
                db in
                try createRunTables(db)
                try createAccountingTables(db)
                try createSchedulingTables(db)
            }
            migrator.registerMigration("v2: cache counters and request cache policy") { db in
                try createCacheCounters(db)
            }
            migrator.registerMigration("v3: run specs, open deferrals index, typical answer length per model")
            {
                db in
                try db.alter(table: "runs") { t in t.add(column: "spec", .text) }
                try db.alter(table: "model_latency") { t in
                    t.add(column: "output_tokens", .double).notNull().defaults(to: 0)
                }
                try db.create(index: "deferred_open", on: "deferred", columns: ["released_at", "job"])
            }
            migrator.registerMigration(
                "v4: failed and unpriced calls in the ledger, a run's streak of alike failures"
            ) {
                db in
                try createFailureAccounting(db)
            }
            migrator.registerMigration("v5: spool entries not taken") { db in
                try db.create(table: "spool_not_taken") { t in
                    t.column("job", .text).notNull()
                    t.column("entry", .text).notNull()
                    t.column("reason", .text).notNull()
                    t.column("noticed_at", .datetime).notNull()
                    t.primaryKey(["job", "entry"])
                }
            }
            migrator.registerMigration(
                "v6: indexes for every report and the run loop, item and spend counters kept by triggers, "
                    + "the cache's byte total"
            ) { db in
                try createScaleIndexes(db)
                try createItemCounters(db)
                try createSpendCounters(db)
                try createCacheTotals(db)
            }
            migrator.registerMigration("v7: provider batches and their items") { db in
                try createProviderBatches(db)
            }
            migrator.registerMigration("v8: batched prompts in provider batches, what the provider last said")
            {
                db in
                try carryBatchedPrompts(db)
            }
            migrator.registerMigration("v9: runs canceled by the user") { db in
                try db.alter(table: "runs") { t in t.add(column: "canceled_at", .datetime) }
            }
            migrator.registerMigration("v10: how each model's batched prompts fared") { db in
                try db.create(table: "batch_fitness") { t in
                    t.column("provider", .text).notNull()
                    t.column("model", .text).notNull()
                    t.column("fitness", .text).notNull()  // BatchFitness, as JSON
                    t.column("updated_at", .datetime).notNull()
                    t.primaryKey(["provider", "model"])
                }
            }
            migrator.registerMigration("v11: budget reservations of calls in flight") { db in
                try createBudgetReservations(db)
            }
            migrator.registerMigration("v12: why a provider batch's polls keep failing") { db in
                try recordPollFailures(db)
            }
            migrator.registerMigration("v13: system prompts stored once, not in every request") { db in
                try db.execute(sql: StoredPayload.createTableSQL)
            }
        case .hosts:
            migrator.registerMigration(
                "v14: the host of each lease, reservation and ledger row; the hosts seen"
            ) {
                db in
                try recordHosts(db)
            }
        case .jobSpecs:
            migrator.registerMigration("v15: the spec each host runs each job with") { db in
                try recordJobSpecs(db)
            }
        case .sharedLimits:
            migrator.registerMigration("v16: the providers' limits shared by every process on the store") {
                db in
                try shareLimits(db)
            }
        case .claims:
            migrator.registerMigration(
                "v17: claims on rounds of a run's requests, so several hosts work one run"
            ) {
                db in
                try createClaims(db)
            }
        case .deferringHosts:
            migrator.registerMigration(
                "v18: the host that deferred each job and that sent each provider batch"
            ) {
                db in
                try recordDeferringAndBatchHosts(db)
            }
        case .reuse:
            migrator.registerMigration(
                "v19: answers reused while their prompt is unchanged; the sources behind each request"
            ) {
                db in
                try markReusedAnswers(db)
            }
        case .searches:
            migrator.registerMigration(
                "v20: the web searches each call ran; the search results each answer cited"
            ) {
                db in
                try countSearches(db)
            }
        case .audits:
            migrator.registerMigration(
                "v21: the batch audit: audit calls in the ledger, audited items, audit records"
            ) {
                db in
                try recordAudits(db)
            }
        case .auditBatches:
            migrator.registerMigration("v22: audit requests in provider batches") { db in
                try auditBatches(db)
            }
        case .flex:
            migrator.registerMigration("v23: calls made with flex processing") { db in
                try markFlexCalls(db)
            }
        case .queuedAudits:
            migrator.registerMigration("v24: audits queued with the batched answers they check") { db in
                try queueAudits(db)
            }
            migrator.registerMigration("v25: cache entries found by a row id made from their key") { db in
                try findCacheRowsByID(db)
            }
        case .answeredItems:
            migrator.registerMigration("v26: the answered items of a job found by an index") { db in
                try indexAnsweredItems(db)
            }
        case .retention:
            migrator.registerMigration("v27: retention: pruned runs, and the items they answered") { db in
                try keepAnsweredItemsOfPrunedRuns(db)
            }
        case .lostCalls:
            migrator.registerMigration("v28: calls in flight, booked as lost when their process dies") { db in
                try writeDownCallsInFlight(db)
            }
        case .probeClaims:
            migrator.registerMigration("v29: claims on probing a batch size") { db in
                try createProbeClaims(db)
            }
        case .rolledLedger:
            migrator.registerMigration("v30: the ledger rolled up by day") { db in
                try rollUpLedgerByDay(db)
            }
        case .ledgerWindowsAndTags:
            migrator.registerMigration("v31: the price window, waiting's savings and the tags of each call") {
                db in
                try markWindowsAndTags(db)
            }
        case .providerOutages:
            migrator.registerMigration("v32: provider routes found down, for their fallbacks") { db in
                for statement in ProviderOutage.tableStatements(postgres: false) {
                    try db.execute(sql: statement)
                }
            }
        }
    }
}
