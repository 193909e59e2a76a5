import Foundation

/// Provider batches: prepared, submitted, polled, collected (each result committed with its ledger row), abandoned; and how well each model answers batched prompts.
///
/// One role of the store seam (`Store`), played by both engines: SQLite (`SQLiteStore`) and
/// PostgreSQL (`PostgresEngine`), with the same observable results.
protocol BatchStore: AnyObject, Sendable {
    /// How `model`'s batched prompts fared with `provider`; nil before its first.
    func batchFitness(provider: String, model: String) throws(OffpeakError) -> BatchFitness?

    /// Every model's record, most recently updated first (for `status`).
    func batchFitnessRecords() throws(OffpeakError) -> [BatchFitness]

    /// Changes the record of `provider` and `model` in one transaction (read, change, write), so
    /// runs answering at once never lose each other's counts.
    @discardableResult
    func updateBatchFitness(
        provider: String, model: String, at now: Date,
        _ change: @escaping @Sendable (inout BatchFitness) -> Void
    ) throws(OffpeakError) -> BatchFitness

    /// Counts one more failed poll of the batch, keeps `reason` (already redacted) as the last one,
    /// and asks again from `next`.
    func recordPollFailure(batchID: String, reason: String, next: Date) throws(OffpeakError)

    /// A poll went through: the failures before it are forgotten.
    func clearPollFailures(batchID: String) throws(OffpeakError)

    /// Batches, most recently prepared first: the open ones (preparing, submitted, ended), or with
    /// `all` every one, at most `limit`. `provider_batches` holds one row per batch, not per item.
    func batchListings(all: Bool, limit: Int?) throws(OffpeakError) -> [BatchListing]

    /// How many batches the store holds, open or not.
    func batchCount() throws(OffpeakError) -> Int

    /// Requests of a run out in a provider batch now (state `in_batch`).
    func requestsInBatch(runID: String) throws(OffpeakError) -> Int

    /// Books one provider request's result in one transaction: its ledger row (marked batch), its
    /// answers (requests done), items failed, the rest back to pending to go again (in a new batch
    /// or live), every item's outcome, and with `run` its counters, checkpoint and lease.
    /// - Returns: false, booking nothing, when the custom id's outcome is already set (the same
    ///   results collected twice) or the batch has no such custom id.
    @discardableResult
    func commitBatchCall(
        batchID: String, customID: String, _ booking: BatchBooking, run: RunRecord?,
        lease: RunHold?, now: Date
    ) throws(OffpeakError) -> Bool

    /// `commitBatchCall` for several provider requests in one transaction (one fsync for many
    /// results, not one each); each custom id is still booked whole and once.
    /// - Returns: the custom ids booked now (those already booked are skipped).
    func commitBatchCalls(
        batchID: String, _ bookings: [(customID: String, booking: BatchBooking)], run: RunRecord?,
        lease: RunHold?, now: Date
    ) throws(OffpeakError) -> Set<String>

    /// Marks the batch `collected` once every item's outcome, and every audit's, is booked.
    /// - Returns: whether this call collected it: false while an item has no outcome yet, and
    ///   false for a batch already collected (or failed), so of two processes collecting one batch
    ///   only one is told it did.
    @discardableResult
    func markCollected(batchID: String, now: Date) throws(OffpeakError) -> Bool

    /// A `preparing` batch the provider never created (reconciliation found nothing): its requests
    /// still in the batch go back to pending, and the batch is `failed` with `reason`. A batch past
    /// `preparing` is left alone.
    func abandonPreparing(batchID: String, reason: String, now: Date) throws(OffpeakError)

    /// Commits a new `preparing` batch and its items, and moves those requests to `in_batch`,
    /// BEFORE any call creates it at the provider. `calls` holds the request ids of each provider
    /// request in order: the n-th gets custom id `<batch id>_<n>`, each of its requests the slot of
    /// its place in the batched prompt. Only requests still `pending` or `retrying` are taken; a
    /// request in another state is refused and nothing is committed. The batch records `host`, the
    /// host that sends it, for `offpeak batches` to name. `audits` are items of the calls also
    /// asked alone in the batch (the batch audit): the n-th gets custom id
    /// `BatchRecord.auditCustomID(batchID:index: n)`, and counts as one more provider request.
    func prepareBatch(
        runID: String, provider: String, model: String, calls: [[String]], audits: [BatchAuditSlot],
        worstDollars: Double, worstTokens: (input: Int, output: Int), host: String, now: Date
    ) throws(OffpeakError) -> BatchRecord

    /// A batch's audit requests (`prepareBatch`'s `audits`), in order, each with its item's request.
    func batchAudits(batchID: String) throws(OffpeakError) -> [(
        audit: BatchAuditRecord, request: RequestRecord
    )]

    /// Stores the provider's id for a batch just created: `submitted`, polled from `nextPoll`.
    /// Storing the same id again changes nothing; a different one is refused (one batch, one id).
    func recordSubmitted(batchID: String, remoteID: String, now: Date, nextPoll: Date) throws(OffpeakError)

    /// Batches whose poll is due by `now`: submitted ones to ask about, ended ones to collect.
    func batchesToPoll(now: Date) throws(OffpeakError) -> [BatchRecord]

    /// Batches committed but never given a provider id: each was created or not; reconciliation decides.
    func preparingBatches() throws(OffpeakError) -> [BatchRecord]

    func batch(id: String) throws(OffpeakError) -> BatchRecord?

    /// A run's batches, oldest first.
    func batches(runID: String) throws(OffpeakError) -> [BatchRecord]

    /// A batch's items, by custom id and slot.
    func items(batchID: String) throws(OffpeakError) -> [BatchItemRecord]

    /// What the provider said at a poll: its state, counts and expiry, and when to ask next.
    func recordPoll(
        batchID: String, status: String, counts: RemoteBatch.Counts, expiresAt: Date?, next: Date
    ) throws(OffpeakError)

    /// The worst case of a run's batches still out, as a spend (their requests as calls, their
    /// worst tokens and dollars): counted against its budget until they are collected.
    func openBatchLoad(runID: String) throws(OffpeakError) -> Spend

    /// Whether a run has provider batches still out (prepared, submitted or ended, not collected).
    func hasOpenBatches(runID: String) throws(OffpeakError) -> Bool

    /// Every batch still out (any run), oldest first: what `offpeak batches` and `status` show.
    func openBatches() throws(OffpeakError) -> [BatchRecord]

    /// The provider says the batch's results are ready: `ended`, due to collect at once.
    func markEnded(batchID: String, now: Date) throws(OffpeakError)

    func reschedulePoll(batchID: String, next: Date) throws(OffpeakError)

    /// A batch's provider requests: each custom id with its requests in slot order, as sent.
    func batchCalls(batchID: String) throws(OffpeakError) -> [(customID: String, requests: [RequestRecord])]

    /// Every provider batch id the store holds: a batch found again must be none of these.
    func knownRemoteIDs() throws(OffpeakError) -> Set<String>

    /// When a run has nothing to do but wait for its provider batches, none of them due a poll:
    /// the earliest poll. Nil when a pass has work (a request pending, retrying or waiting, a batch
    /// due or never recorded) or the run has no batch out.
    func nextBatchPollOnly(runID: String, now: Date) throws(OffpeakError) -> Date?
}

extension BatchStore {
    /// `prepareBatch` with no worst-case tokens, and no host unless one is given (as a batch sent
    /// before hosts were recorded).
    func prepareBatch(
        runID: String, provider: String, model: String, calls: [[String]], worstDollars: Double,
        host: String = "", now: Date
    ) throws(OffpeakError) -> BatchRecord {
        try prepareBatch(
            runID: runID, provider: provider, model: model, calls: calls, audits: [],
            worstDollars: worstDollars,
            worstTokens: (0, 0), host: host, now: now)
    }

    /// `prepareBatch` with each request alone in its provider request.
    func prepareBatch(
        runID: String, provider: String, model: String, requestIDs: [String], worstDollars: Double,
        host: String = "", now: Date
    ) throws(OffpeakError) -> BatchRecord {
        try prepareBatch(
            runID: runID, provider: provider, model: model, calls: requestIDs.map { [$0] },
            worstDollars: worstDollars, host: host, now: now)
    }

    func batchListings(all: Bool) throws(OffpeakError) -> [BatchListing] {
        try batchListings(all: all, limit: nil)
    }

    @discardableResult
    func commitBatchCall(
        batchID: String, customID: String, _ booking: BatchBooking, run: RunRecord?, now: Date
    ) throws(OffpeakError) -> Bool {
        try commitBatchCall(batchID: batchID, customID: customID, booking, run: run, lease: nil, now: now)
    }
}

extension BatchStore {
    /// Makes `change` (`updateBatchFitness(provider:model:at:_:)`).
    @discardableResult
    func updateBatchFitness(_ change: FitnessChange) throws(OffpeakError) -> BatchFitness {
        try updateBatchFitness(provider: change.provider, model: change.model, at: change.at, change.change)
    }
}
