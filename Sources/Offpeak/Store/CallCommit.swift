import Foundation

/// One call as it is committed (`RunStore.commit(_:)`): its ledger row, each answered item's
/// result, items to ask again now (`retry`) or at a time (`later`), items failed for good, the
/// segment it ends, the run's lease to renew and the budget reservation its ledger row replaces.
struct CallCommit: Sendable {
    var run: RunRecord
    var ledger: LedgerEntry?
    var results: [ResultRecord]
    var retry: [(id: String, reason: String)] = []
    var failed: [(id: String, reason: String)] = []
    var segment = 0
    var later: [(id: String, reason: String, at: Date)] = []
    var lease: (owner: String, ttl: TimeInterval)?
    var reservation: Int64?

    /// What a committed call leaves that its caller reads next, read in the commit's transaction.
    struct Committed: Sendable {
        /// The run with its counters as committed.
        var run: RunRecord
        /// The run's spend, this call included.
        var spend: Spend
    }
}
