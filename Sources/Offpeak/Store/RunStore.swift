import Foundation

/// Runs and their requests: opening, merging and reading runs, the backlog of requests, answered calls committed with their ledger rows and checkpoints, cancelling, and the steps of a multi-step job.
///
/// One role of the store seam (`Store`), played by both engines: SQLite (`SQLiteStore`) and
/// PostgreSQL (`PostgresEngine`).
protocol RunStore: AnyObject, Sendable {
    /// The run's next `limit` pending requests in item order, after the one at `position` (from the
    /// start when nil): page through a backlog of any size by passing the last position seen.
    func pendingRequests(runID: String, after position: Int?, limit: Int) throws(OffpeakError)
        -> [RequestRecord]

    /// The run's requests waiting to be retried whose time has come by `now` (or that have no time), in
    /// item order.
    func dueRetries(runID: String, by now: Date, limit: Int?) throws(OffpeakError) -> [RequestRecord]

    /// The run's items by state, as its commits left them: one row, however big the run
    /// (`run_items`, kept by triggers). The `runs` row holds the same numbers as of the last commit.
    func itemCounts(runID: String) throws(OffpeakError) -> ItemCounts

    /// Drops the run's requests not yet answered nor out in a provider batch, and marks the run
    /// canceled, in one transaction. With items in provider batches the run stays open until a
    /// pass collects them (what the provider answered was paid for, and is kept); with none, it
    /// ends `canceled` now.
    func cancelRun(runID: String, now: Date) throws(OffpeakError) -> Store.Cancellation

    /// Whether the user canceled the run: it then ends `canceled` once its provider batches are
    /// collected (what they answered was paid for, and is kept), and nothing more is sent for it.
    func isCanceled(runID: String) throws(OffpeakError) -> Bool

    /// Requests waiting for their next attempt, soonest first: read off the partial index
    /// `requests_retrying`, which holds only them (the condition is spelled as the index's).
    func retryingRequests() throws(OffpeakError) -> [RequestRecord]

    /// Every request of the run in item order, outlined.
    func outlines(runID: String) throws(OffpeakError) -> [RequestOutline]

    /// The run's answers one at a time, so a run's answers never need to fit in memory together.
    func forEachResult(runID: String, _ body: (ResultRecord) throws -> Void) throws(OffpeakError)

    /// The run's requests in `state`: how many, and the first `examples` of them (two reads of the
    /// run-and-state index).
    func summary(runID: String, state: RequestRecord.State, examples: Int) throws(OffpeakError)
        -> StateSummary

    /// Decides and applies the next steps of a run's long items in one transaction, so two
    /// decisions never see the same rows: `decide` reads the run's requests and answers as
    /// committed, and a crash before the commit leaves them to be decided the same way again.
    /// Step rows are unique by `(run_id, item_id)`: a step is inserted at most once.
    /// - Returns: whether the run has new requests to send.
    func advanceSteps(
        runID: String,
        _ decide: ([RequestRecord], [String: ResultRecord]) -> StepChanges
    ) throws(OffpeakError) -> Bool

    /// The newest run of `job` that has not finished, if any. When that run's row cannot be read,
    /// an error (74) says which and how to repair it: the job is neither resumed nor started anew
    /// beside it.
    func latestResumableRun(job: String) throws(OffpeakError) -> RunRecord?

    /// The newest run of `job` that has finished (completed, failed or canceled), of those created
    /// before `createdBefore` when it is given, if any; an error (74) when that run's row cannot be
    /// read.
    func latestFinishedRun(job: String, createdBefore: Date?) throws(OffpeakError) -> RunRecord?

    /// The prompt of each item of the run that its spec listed (not a submitted request, not a
    /// step), by item id: its key, which tells an item changed since an earlier run (`ItemChange`),
    /// and the sources it was built from, which its outputs cite.
    func itemPrompts(runID: String) throws(OffpeakError) -> [String: ItemPrompt]

    /// The answer of each item of the run's spec (not steps) that has one, by item id: what tells
    /// whether an item that searches the web changed (`ItemNotes`), whose prompt does not.
    func itemAnswers(runID: String) throws(OffpeakError) -> [String: String]

    /// The ids of `job`'s items (from its spec, not steps) answered in any of its runs, pruned ones
    /// too (`answered_items`): a feed's entries already answered, which are not asked again.
    func answeredItems(job: String) throws(OffpeakError) -> Set<String>

    // Retention (`RunStore+Retention`): which finished runs may be pruned, and pruning them.
    func prunableRuns(before cutoff: Date, limit: Int) throws(OffpeakError) -> [String]
    func pruneCounts(runID: String) throws(OffpeakError) -> PruneReport?
    func prune(runID: String, at now: Date) throws(OffpeakError) -> PruneReport?
    func dropUnusedSharedTexts() throws(OffpeakError) -> Int
    func prunedAt(runID: String) throws(OffpeakError) -> Date?

    /// Every answer to an item of `job`'s spec (not a step) in its runs created before `before`,
    /// oldest run first and in item order: what a feed job's output folder holds from its earlier
    /// runs (`OutputWriter`).
    func earlierAnswers(job: String, before: Date) throws(OffpeakError) -> [EarlierAnswer]

    /// The run, or nil when there is none; an error (74) when its row cannot be read.
    func run(id: String) throws(OffpeakError) -> RunRecord?

    /// The run, or nil when there is none or its row cannot be read: for reports that go on without it.
    func readableRun(id: String) throws(OffpeakError) -> RunRecord?

    /// Runs, newest first; rows that cannot be read are left out.
    func runs(limit: Int) throws(OffpeakError) -> [RunRecord]

    /// The newest `limit` runs, those that cannot be read named apart.
    func runRows(limit: Int) throws(OffpeakError) -> RunRows

    /// Runs that have not finished, oldest first; rows that cannot be read are left out.
    func resumableRuns() throws(OffpeakError) -> [RunRecord]

    /// Runs that have not finished, oldest first, those that cannot be read named apart.
    func resumableRunRows() throws(OffpeakError) -> RunRows

    /// The job's unfinished run, or `fresh` with its requests saved, decided in one transaction
    /// that excludes every other decision for the job (SQLite: IMMEDIATE; PostgreSQL: the job's
    /// advisory lock): two processes starting the same job at the same moment get the same run,
    /// never one each (which would answer every item twice). A fresh run is saved with `lease`,
    /// its creator's: no other process sees it unheld (a tick elsewhere would take it for a run
    /// to resume, and run it as well). Without `fresh`, it only finds the unfinished run.
    /// - Returns: the run, and whether it is `fresh`; nil when there is neither.
    func openRun(job: String, creating fresh: RunRecord?, requests: [RequestRecord], lease: LeaseRecord?)
        throws(OffpeakError) -> (run: RunRecord, created: Bool)?

    /// Saves a new run and its requests together.
    func insert(run: RunRecord, requests: [RequestRecord]) throws(OffpeakError)

    /// Adds requests for items the run does not have yet, refreshes the payload of pending ones whose
    /// spec changed, and drops pending ones whose item left the spec; answered requests are never touched.
    ///
    /// Reads only the run's spec and step requests (and, by id, any other request a planned item
    /// names), so resuming a queue job with 100,000 submitted requests reads none of them.
    /// - Returns: the ids of the items dropped (not their long documents' steps, which are planned again).
    @discardableResult
    func merge(requests: [RequestRecord], into runID: String) throws(OffpeakError) -> [String]

    /// The run's checkpoint: what it had finished when it last committed.
    func checkpoint(runID: String) throws(OffpeakError) -> CheckpointRecord?

    func update(run: RunRecord) throws(OffpeakError)

    /// Requests of a run in item order, optionally only those in `states`.
    func requests(runID: String, states: [RequestRecord.State]?) throws(OffpeakError)
        -> [RequestRecord]

    /// Answers of a run, keyed by request id.
    func results(runID: String) throws(OffpeakError) -> [String: ResultRecord]

    /// Commits one call: its ledger row, each answered item's result, items to ask again, items
    /// failed for good, the run's counters and the checkpoint, in one transaction. A crash before it
    /// loses the call; after it, nothing. The run's lease is renewed in the same transaction, and
    /// the call's budget reservation, if it had one, gives way to its ledger row.
    /// - Returns: the run with its counters and its spend, as committed.
    ///
    /// Calls that came back together commit together (group commit): one transaction, one flush of
    /// the log, the run locked, its progress saved and its spend read once; each call's rows as if
    /// it were alone, in order.
    /// - Parameter calls: at least one; the last one's `run` is the run as the group leaves it.
    @discardableResult
    func commit(_ calls: [CallCommit]) throws(OffpeakError) -> CallCommit.Committed

    /// Starts committing calls as `commit(_:)` does, and hands back before it is done where the
    /// engine can (PostgreSQL sends the whole transaction and goes on): what the store runs next on
    /// this connection runs after it, and `PendingCommit.committed` says how it went.
    func startCommit(_ calls: [CallCommit]) throws(OffpeakError) -> any PendingCommit

    /// Commits answers taken from the cache, each with its ledger row, in one transaction.
    func commitCacheHits(
        run: RunRecord, _ hits: [(ledger: LedgerEntry, result: ResultRecord)],
        lease: RunHold
    ) throws(OffpeakError)
}

extension RunStore {
    /// The job's unfinished run, or `fresh` with its requests saved (`openRun(job:creating:…)`).
    func openRun(job: String, creating fresh: RunRecord, requests: [RequestRecord], lease: LeaseRecord?)
        throws(OffpeakError) -> (run: RunRecord, created: Bool)
    {
        let optional: RunRecord? = fresh
        guard let opened = try openRun(job: job, creating: optional, requests: requests, lease: lease) else {
            throw OffpeakError(.software, "the store neither found nor created a run of \(job)")
        }
        return opened
    }
}

extension RunStore {
    /// Commits at once (`commit(_:)`): the engine has nothing to gain from handing back earlier.
    func startCommit(_ calls: [CallCommit]) throws(OffpeakError) -> any PendingCommit {
        DoneCommit(value: try commit(calls))
    }

    /// Commits one call (`commit(_:)`).
    @discardableResult
    func commit(_ call: CallCommit) throws(OffpeakError) -> CallCommit.Committed {
        try commit([call])
    }

    func pendingRequests(runID: String, limit: Int) throws(OffpeakError) -> [RequestRecord] {
        try pendingRequests(runID: runID, after: nil, limit: limit)
    }

    func dueRetries(runID: String, by now: Date) throws(OffpeakError) -> [RequestRecord] {
        try dueRetries(runID: runID, by: now, limit: nil)
    }

    func runs() throws(OffpeakError) -> [RunRecord] { try runs(limit: 50) }

    func runRows() throws(OffpeakError) -> RunRows { try runRows(limit: 50) }

    /// The run's requests in `state`: how many, and the first.
    func summary(runID: String, state: RequestRecord.State) throws(OffpeakError) -> StateSummary {
        try summary(runID: runID, state: state, examples: 1)
    }

    func requests(runID: String) throws(OffpeakError) -> [RequestRecord] {
        try requests(runID: runID, states: nil)
    }

    /// Commits one call (`commit(_:)`), naming only what it has.
    @discardableResult
    func commitCall(
        run: RunRecord, ledger: LedgerEntry?, results: [ResultRecord],
        retry: [(id: String, reason: String)] = [],
        failed: [(id: String, reason: String)] = [], segment: Int = 0,
        later: [(id: String, reason: String, at: Date)] = [],
        lease: RunHold? = nil, releasing reservation: Int64? = nil,
        fitness: FitnessChange? = nil, cache: CacheWrite? = nil
    ) throws(OffpeakError) -> CallCommit.Committed {
        try commit(
            CallCommit(
                run: run, ledger: ledger, results: results, retry: retry, failed: failed, segment: segment,
                later: later, lease: lease, reservation: reservation, fitness: fitness, cache: cache))
    }
}

extension RunStore {
    /// The newest run of `job` that has finished, if any (`latestFinishedRun(job:createdBefore:)`).
    func latestFinishedRun(job: String) throws(OffpeakError) -> RunRecord? {
        try latestFinishedRun(job: job, createdBefore: nil)
    }
}

/// An item's prompt as outputs see it (`RunStore.itemPrompts`).
struct ItemPrompt: Sendable, Equatable {
    /// The request's `cacheKey`: the same exactly when the prompt is.
    var cacheKey: String
    /// `RequestRecord.sources`.
    var sources: String?
}
