import Foundation

/// The run's commit stage (DESIGN.md's data flow: call, then commit): a call's commit is sent to the
/// store (`RunStore.startCommit`) and the pass goes on with its next call; the commit is read back
/// (the run's counters, its spend, what the model's record and the cache became) before the next
/// one is sent, before a failure is judged, and at each round's end. One commit at a time is on its
/// way: it holds its call's place among the calls in flight, so a kill loses at most as many
/// answered calls as may be in flight.
///
/// The stage also keeps the run's spend as its commits left it, each call's ledger row added as it
/// is sent, so the budget gate need not read the ledger before each call.
struct CommitStage {
    /// The last call's commit on its way, and what its batched answer taught about its model.
    private var onItsWay: (pending: any PendingCommit, lesson: FitnessLesson?)?
    /// The run's spend as this pass's commits left it, the one on its way included; nil: to be
    /// read from the store.
    private(set) var knownSpend: Spend?

    /// A commit read back, with the lesson its call was sent with.
    struct Read {
        var committed: CallCommit.Committed
        var lesson: FitnessLesson?
    }

    /// Whether a commit is on its way.
    var isSending: Bool { onItsWay != nil }

    /// Keeps the commit `pending` on its way; `ledger` is its call's row, added to the spend now.
    /// - Throws: `.software` when the commit before it was not read (`read`): its counters would
    ///   be lost.
    mutating func sent(_ pending: any PendingCommit, ledger: LedgerEntry?, lesson: FitnessLesson?)
        throws(OffpeakError)
    {
        guard onItsWay == nil else {
            throw OffpeakError(.software, "a call's commit was sent before the one on its way was read")
        }
        onItsWay = (pending, lesson)
        if let ledger { knownSpend?.add(ledger) }
    }

    /// Waits for the commit on its way and returns what it left; nil when none is on its way.
    /// - Throws: why it failed (nothing of its call was committed); it is no longer on its way.
    mutating func read() throws(OffpeakError) -> Read? {
        guard let sent = onItsWay else { return nil }
        onItsWay = nil
        let committed = try sent.pending.committed()
        knownSpend = committed.spend
        return Read(committed: committed, lesson: sent.lesson)
    }

    /// A ledger row written outside a call's commit (an audit call's).
    mutating func add(_ ledger: LedgerEntry) { knownSpend?.add(ledger) }

    /// The run's spend as read from the store.
    mutating func know(_ spend: Spend) { knownSpend = spend }

    /// The spend is to be read from the store again: rows were written that the stage did not see
    /// (a round's cache hits).
    mutating func forgetSpend() { knownSpend = nil }
}
