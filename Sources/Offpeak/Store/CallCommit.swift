import Foundation

/// One call as it is committed (`RunStore.commit(_:)`): its ledger row, each answered item's
/// result, items to ask again now (`retry`) or at a time (`later`, or `postponed` with no attempt
/// counted), items failed for good, the
/// segment it ends, the run's lease to renew, the budget reservation its ledger row replaces, what
/// its batched answer taught about the model (`fitness`) and its answers for the cache (`cache`).
struct CallCommit: Sendable {
    // Everything one transaction writes for a call, field by field, so each engine composes it alike.
    var run: RunRecord
    var ledger: LedgerEntry?
    var results: [ResultRecord]
    var retry: [(id: String, reason: String)] = []
    var failed: [(id: String, reason: String)] = []
    var segment = 0
    var later: [(id: String, reason: String, at: Date)] = []
    /// Items to ask again at a time, their attempts left as they were: the provider turned the
    /// call away (a flex call refused for capacity), not the items.
    var postponed: [(id: String, reason: String, at: Date)] = []
    var lease: RunHold?
    var reservation: Int64?
    var fitness: FitnessChange?
    var cache: CacheWrite?
    /// Audits of its batched answer to make (`QueuedAudit`), queued with them.
    var audits: [QueuedAudit] = []

    /// The requests the call answers, fails or leaves to ask again: each must still be due when it
    /// commits (`ClaimLost`).
    var requestIDs: [String] {
        results.map(\.requestId) + retry.map(\.id) + failed.map(\.id) + later.map(\.id)
            + postponed.map(\.id)
    }

    /// The last request the call answers, fails or leaves to ask again: the checkpoint's.
    var lastRequestID: String? {
        results.last?.requestId ?? failed.last?.id ?? retry.last?.id ?? later.last?.id ?? postponed.last?.id
    }

    /// What committed calls leave that their caller reads next, read in the commit's transaction.
    struct Committed: Sendable {
        /// The run with its counters as committed.
        var run: RunRecord
        /// The run's spend, these calls included.
        var spend: Spend
        /// Each model's batch fitness record as the commit's `fitness` changes left it, by model.
        var fitness: [String: BatchFitness] = [:]
        /// Cache entries evicted to make room for `cache`'s.
        var evicted = 0
    }
}

/// A call's commit on its way (`RunStore.startCommit`): the caller goes on with its next call and
/// reads what the commit left once it needs it.
protocol PendingCommit: Sendable {
    /// What the commit left, once it is done (waiting for it if need be).
    /// - Throws: why it failed; nothing of the call was committed then.
    func committed() throws(OffpeakError) -> CallCommit.Committed
}

/// A commit done before it was handed back (`RunStore.startCommit` on an engine that commits at once).
struct DoneCommit: PendingCommit {
    let value: CallCommit.Committed

    func committed() -> CallCommit.Committed { value }
}

/// Entries for the answer cache (`AnswerCacheStore.saveCacheEntries`): the records, the accesses
/// counted since the last write, and the bytes the cache may hold (least recently used entries
/// past it are evicted).
struct CacheWrite: Sendable {
    var records: [CacheEntryRecord]
    var accesses: PendingAccesses.Batch
    var maxBytes: Int

    /// Refuses, before any write, a record with a date the store cannot hold.
    func checkDates() throws(OffpeakError) {
        for record in records { try StoredDate.check(record) }
    }
}

/// A change to a model's batch fitness record (`BatchStore.updateBatchFitness`), read, changed and
/// written in one transaction, so two processes learning at once take turns.
struct FitnessChange: Sendable {
    var provider: String
    var model: String
    var at: Date
    var change: @Sendable (inout BatchFitness) -> Void
}
