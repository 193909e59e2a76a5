import Foundation

/// The batch audit (`AuditRecord`): batched items also asked alone, what each comparison found,
/// and what the audit decided for each job and model.
///
/// One role of the store seam (`Store`), played by both engines: SQLite (`SQLiteStore`) and
/// PostgreSQL (`PostgresEngine`), with the same observable results.
protocol AuditStore: AnyObject, Sendable {
    /// Claims the probing of `key` for `owner` until `now + ttl` (`AuditStore+Probes`): nil when
    /// this owner holds it now, else the process that does.
    func claimProbe(_ key: ProbeKey, owner: String, host: String, ttl: TimeInterval, now: Date)
        throws(OffpeakError) -> String?

    /// The live process probing `key`, if one is.
    func prober(of key: ProbeKey, now: Date) throws(OffpeakError) -> String?

    /// Gives `owner`'s claim on `key` back (nil: every claim it holds).
    func releaseProbes(owner: String, key: ProbeKey?) throws(OffpeakError)

    /// What the audit learned of `job`'s batched prompts to `model` at `provider`; nil before its
    /// first audited item.
    func auditRecord(job: String, provider: String, model: String) throws(OffpeakError) -> AuditRecord?

    /// Every record of `job` (nil: of every job), most recently updated first.
    func auditRecords(job: String?) throws(OffpeakError) -> [AuditRecord]

    /// Commits one audit call in one transaction: its ledger row (marked audit, its id written
    /// into the audit row), the audit row, the record's change, and when the single answer is
    /// kept, the item's result replaced by it and its cache entry written. An audit request of a
    /// provider batch (`AuditCommit.slot`) is booked once: booked before, nothing is written. A
    /// queued audit (`AuditCommit.queued`) leaves the queue; one another process booked first
    /// writes its ledger row alone (the call was paid for all the same).
    /// - Returns: the record as the change left it; nil when there was no change (a failed call,
    ///   or a batch's audit booked before).
    @discardableResult
    func commitAudit(_ audit: AuditCommit) throws(OffpeakError) -> AuditRecord?

    /// Answers of the run the audit proved unreliable, asked again: each request still `done`
    /// goes back to `pending` with `reason` as its note, its result and any audit still queued of
    /// it are deleted, the cache entry under its key is deleted (or the next round would answer it
    /// from there), and the run's counters and checkpoint follow, in one transaction. Requests in
    /// another state are left.
    /// - Returns: how many went back.
    @discardableResult
    func reopen(runID: String, requests: [(id: String, cacheKey: String)], reason: String, now: Date)
        throws(OffpeakError) -> Int

    /// The run's answers the audit has not vouched for in prompts now too large: requests still
    /// `done` whose answer came from a call to `model` carrying more than `largerThan` items (not
    /// from the cache), that no audit checked, each with its cache key, in item order. What
    /// `reopen` takes when a size fails, found in the store so a pass killed before it reopened
    /// them leaves them for the next.
    func uncheckedAnswers(runID: String, model: String, largerThan: Int) throws(OffpeakError)
        -> [(id: String, cacheKey: String)]

    /// `job`'s audited items, oldest first (for `offpeak audit`).
    func auditRows(job: String) throws(OffpeakError) -> [AuditRow]

    /// The audits the run's batched calls left to make (`QueuedAudit`), each with its request and
    /// the batched answer it checks, in item order; answers no longer there are left out.
    func queuedAudits(runID: String) throws(OffpeakError) -> [(
        audit: QueuedAudit, request: RequestRecord, answer: String
    )]

    /// How many of the run's batched answers an audit replaced with the item's single answer.
    func replacedAnswers(job: String, runID: String) throws(OffpeakError) -> Int

    /// What `job`'s audit calls cost (ledger rows marked audit; nil: every job's), of one run when
    /// `runID` is given.
    func auditSpend(job: String?, runID: String?) throws(OffpeakError) -> Spend
}

/// One batched item also asked alone (`audit_items`): where it sat, both answers, whether they
/// agreed, and which one the item kept.
struct AuditRow: Sendable, Equatable {
    var id: Int64?
    var at: Date
    var job: String
    var runID: String
    var requestID: String
    /// The item's id in the job (`RequestRecord.itemId`).
    var itemID: String
    var provider: String
    var model: String
    /// Items in the batched prompt, and this item's place in it, from 1.
    var batchSize: Int
    var position: Int
    var agreed: Bool
    /// `AnswerAgreement`'s score, 0...1.
    var similarity: Double
    /// Both answers, redacted as every answer is.
    var batchedAnswer: String
    var singleAnswer: String
    /// The answer the item kept: the single one when they disagreed.
    var keptSingle: Bool
    /// The audit call's ledger row (set by `commitAudit`).
    var ledgerID: Int64?
    var host: String
}

/// An audit a batched call's commit leaves to make (`audit_queue`, `CallCommit.audits`): the item,
/// where it sat in the prompt, and whether the prompt was a probe. Committed with the call's
/// answers, so an audit a kill interrupts is made by the run's next pass, and the run is not done
/// while audits of its answers are still to make.
struct QueuedAudit: Sendable, Equatable {
    var requestID: String
    var size: Int
    var position: Int
    var probe: Bool
}

/// A change to an audit record (`AuditStore.commitAudit`), read, changed and written in one
/// transaction, so two processes auditing one job take turns.
struct AuditChange: Sendable {
    var job: String
    var provider: String
    var model: String
    var at: Date
    var change: @Sendable (inout AuditRecord) -> Void
}

/// One audit call as it is committed: its ledger row (`LedgerEntry.audit`), and for an answer,
/// the audit row, the record's change, and, when the item keeps the single answer, its new result
/// and cache entry. An audit request of a provider batch names its custom id (`slot`): it is booked
/// once, and one the batch did not answer books its outcome alone (no ledger row: not billed).
struct AuditCommit: Sendable {
    /// An audit request of a provider batch, and what the provider reported for it.
    struct Slot: Sendable, Equatable {
        var batchID: String
        var customID: String
        var outcome: BatchItemRecord.Outcome
    }

    var ledger: LedgerEntry?
    /// The call's reservation (`LostCalls`), which its ledger row replaces.
    var reservation: Int64?
    var slot: Slot?
    /// The request whose queued audit this is (`QueuedAudit`): booked once.
    var queued: String?
    var row: AuditRow?
    var change: AuditChange?
    /// The item's result with the single answer in place of the batched one (same request id).
    var replacement: ResultRecord?
    var cache: CacheWrite?
}
