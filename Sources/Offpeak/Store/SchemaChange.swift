import Foundation

/// The store's schema, change by change: the one list of versions both engines follow. A change is
/// added here once, at the end, and each engine says in one `switch` which of its migrations make
/// it (`StoreMigrations.versions(making:)`, `PostgresMigrations.versions(making:)`), so an engine
/// that does not make a new change does not compile. An engine's own versions (SQLite's cache rows
/// found by id, PostgreSQL's counters kept by triggers) go with the change they follow. The order is
/// the order both engines made them in; their migrations' names and texts are never edited.
enum SchemaChange: CaseIterable, Sendable {
    /// Runs, requests, results, the ledger, checkpoints, leases, schedules, the deferred queue, the
    /// cache, provider batches, batch fitness, budget reservations, shared system prompts: the
    /// store as it was when the PostgreSQL engine began (SQLite's v1 to v13).
    case base
    /// The host of each lease, reservation and ledger row; the hosts seen.
    case hosts
    /// The spec each host runs each job with.
    case jobSpecs
    /// The providers' limits shared by every process on the store.
    case sharedLimits
    /// Claims on rounds of a run's requests, so several hosts work one run.
    case claims
    /// The host that deferred each job and that sent each provider batch.
    case deferringHosts
    /// Answers reused while their prompt is unchanged; the sources behind each request.
    case reuse
    /// The web searches each call ran; the search results each answer cited.
    case searches
    /// The batch audit: audit calls in the ledger, audited items, audit records.
    case audits
    /// Audit requests in provider batches.
    case auditBatches
    /// Calls made with flex processing.
    case flex
    /// Audits queued with the batched answers they check.
    case queuedAudits
    /// The answered items of a job found by an index.
    case answeredItems
    /// Retention: when a finished run's requests and results were pruned, and the items of pruned
    /// runs a job must still know it answered (a feed's entries).
    case retention
    /// Calls in flight written down before they are sent, so a call whose process dies with it is
    /// booked in the ledger as lost in flight (`LostCalls`).
    case lostCalls
    /// Claims on probing a batch size, so hosts probe each size once (`AuditStore+Probes`).
    case probeClaims
    /// The ledger rolled up by day (`LedgerRollUp`): a row may stand for several calls (`calls`),
    /// and a pruned run says when its rows were rolled up.
    case rolledLedger
    /// The price window each call was billed in (`ModelPrice.window`), what waiting for it saved
    /// (`waiting_saved`), and the tags of the work that made it, on every ledger row and on every
    /// call in flight (a lost call keeps them); partial indexes find the rows that have them.
    case ledgerWindowsAndTags
    /// Provider routes found down, so every host sends their calls to the fallbacks until the time
    /// they were given (`ProviderOutage`).
    case providerOutages
}
