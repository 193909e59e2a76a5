import Foundation

/// The run's commit stage (DESIGN.md's data flow: call, then commit): a call's commit is sent to the
/// store (`RunStore.startCommit`) and the pass goes on with its next call; the commit is read back
/// (the run's counters, its spend, what the model's record and the cache became) before the next
/// one is sent, before a failure is judged, and at each round's end. One commit at a time is on its
/// way, of the calls that came back together (group commit): they hold their places among the calls
/// in flight, so a kill loses at most as many answered calls as may be in flight.
///
/// The stage also keeps the run's spend as its commits left it, each call's ledger row added as it
/// is sent, so the budget gate need not read the ledger before each call.
struct CommitStage {
    /// The last commit on its way, what its calls' batched answers taught about their models, and
    /// how many calls it holds.
    private var onItsWay: (pending: any PendingCommit, lessons: [FitnessLesson], calls: Int)?
    /// The run's spend as this pass's commits left it, the one on its way included; nil: to be
    /// read from the store.
    private(set) var knownSpend: Spend?

    /// A commit read back, with the lessons its calls were sent with.
    struct Read {
        var committed: CallCommit.Committed
        var lessons: [FitnessLesson]
    }

    /// Whether a commit is on its way.
    var isSending: Bool { onItsWay != nil }

    /// The calls the commit on its way holds (0: none on its way): answers paid for and not yet
    /// kept, which hold their calls' places among the calls in flight.
    var sendingCalls: Int { onItsWay?.calls ?? 0 }

    /// Keeps the commit `pending` of `calls` calls on its way; `ledgers` are their rows, added to
    /// the spend now.
    /// - Throws: `.software` when the commit before it was not read (`read`): its counters would
    ///   be lost.
    mutating func sent(
        _ pending: any PendingCommit, ledgers: [LedgerEntry], lessons: [FitnessLesson], calls: Int
    ) throws(OffpeakError) {
        guard onItsWay == nil else {
            throw OffpeakError(.software, "a call's commit was sent before the one on its way was read")
        }
        onItsWay = (pending, lessons, calls)
        for ledger in ledgers { knownSpend?.add(ledger) }
    }

    /// Waits for the commit on its way and returns what it left; nil when none is on its way.
    /// - Throws: why it failed (nothing of its calls was committed); it is no longer on its way.
    mutating func read() throws(OffpeakError) -> Read? {
        guard let sent = onItsWay else { return nil }
        onItsWay = nil
        let committed = try sent.pending.committed()
        knownSpend = committed.spend
        return Read(committed: committed, lessons: sent.lessons)
    }

    /// A ledger row written outside a call's commit (an audit call's).
    mutating func add(_ ledger: LedgerEntry) { knownSpend?.add(ledger) }

    /// The run's spend as read from the store.
    mutating func know(_ spend: Spend) { knownSpend = spend }

    /// The spend is to be read from the store again: rows were written that the stage did not see
    /// (a round's cache hits).
    mutating func forgetSpend() { knownSpend = nil }
}
