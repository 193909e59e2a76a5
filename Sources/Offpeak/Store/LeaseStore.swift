import Foundation

/// Leases: which process works on a run, so two never work on one at once.
///
/// One role of the store seam (`Store`), played by both engines: SQLite (`SQLiteStore`) and
/// PostgreSQL (`PostgresEngine`).
protocol LeaseStore: AnyObject, Sendable {
    /// Takes the run's lease for `owner` unless another owner holds a live one.
    ///
    /// A lease is live until it expires, except that a lease of a process on this host that no longer
    /// exists (killed with -9) is taken over at once.
    /// - Parameter host: the host `owner` runs on (`HostName`), recorded with the lease.
    /// - Returns: `nil` on success, else the owner holding it.
    func acquireLease(runID: String, owner: String, host: String, ttl: TimeInterval, now: Date)
        throws(OffpeakError)
        -> String?

    /// Ends `owner`'s lease on the run now. The row stays, expired, naming its last owner: a process
    /// that lost the lease to this one while cut off from the store still finds it taken over
    /// (`LeaseLost`) when its commit gets through.
    func releaseLease(runID: String, owner: String) throws(OffpeakError)

    /// The leases not expired at `now`, whoever holds them.
    func unexpiredLeases(now: Date) throws(OffpeakError) -> [LeaseRecord]

    /// Claims the run's next due requests (pending, and retrying whose time has come by `now`) for
    /// `owner`: at most `limit`, in item order, leaving those inside another owner's live claim.
    /// The claim covers their positions until `now + ttl` (each commit renews it) and replaces the
    /// owner's claim before it; with no due request left to it, the owner's claim is dropped.
    /// Claims of processes of this host that are gone (killed with -9) are dropped first, as their
    /// leases are taken over at once.
    ///
    /// Claims let several processes, on several hosts, work one run at once without asking the
    /// provider twice for one item: the run's lease holder plans, finishes and writes outputs, and
    /// helpers (`RunHold.leased` false) only answer rounds of requests they claimed. Claims are
    /// taken under the run's lock, so two owners never claim one request.
    func claimRound(runID: String, owner: String, host: String, limit: Int, ttl: TimeInterval, now: Date)
        throws(OffpeakError) -> [RequestRecord]

    /// Drops `owner`'s claim on the run: its pass is over, and what it left due is anyone's.
    func releaseClaim(runID: String, owner: String) throws(OffpeakError)

    /// The claims on the run not expired at `now`, of owners other than `owner`.
    func otherClaims(runID: String, owner: String, now: Date) throws(OffpeakError) -> [ClaimRecord]
}

extension LeaseStore {
    /// The leases held at `now`, by run: unexpired, and not held by a process of this host that is
    /// gone (`ProcessOwner.isAlive`); what `acquireLease` would refuse to anyone else.
    func liveLeases(now: Date) throws(OffpeakError) -> [String: LeaseRecord] {
        let live = try unexpiredLeases(now: now).filter { ProcessOwner.isAlive($0.owner) }
        return Dictionary(live.map { ($0.runId, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Who else is answering the run's requests now: the claims of other owners not expired at
    /// `now`, save those of processes of this host that are gone (their claims are dropped by the
    /// next `claimRound`, as their leases are taken over at once).
    func liveClaims(runID: String, except owner: String, now: Date) throws(OffpeakError) -> [ClaimRecord] {
        try otherClaims(runID: runID, owner: owner, now: now).filter { ProcessOwner.isAlive($0.owner) }
    }

    func acquireLease(runID: String, owner: String, host: String, ttl: TimeInterval) throws(OffpeakError)
        -> String?
    {
        try acquireLease(runID: runID, owner: owner, host: host, ttl: ttl, now: Date())
    }
}

/// How a pass holds the run it commits to, renewed with every commit: by its lease (the pass that
/// plans the run, finishes it and writes its outputs), or only by its claims on rounds of the run's
/// requests (a helper, on this host or another: `LeaseStore.claimRound`). Either way its commits
/// are refused whole when one of their requests is no longer due (`ClaimLost`): another owner
/// answered it after this one's claim expired.
struct RunHold: Sendable {
    /// The process (`Store.processOwner`).
    var owner: String
    /// How long the lease and the claim outlive the last commit.
    var ttl: TimeInterval
    /// Whether the pass holds the run's lease; false: a helper, holding only its claim.
    var leased = true
}

/// A claim on a round of a run's requests (`LeaseStore.claimRound`).
struct ClaimRecord: Sendable, Equatable {
    var runId: String
    var owner: String
    /// The host the owner runs on (`HostName`).
    var host: String
    /// The positions of the first and last request of the round: the claim covers both and
    /// everything between.
    var firstPosition: Int
    var lastPosition: Int
    var expiresAt: Date
}

/// A commit of requests no longer due: another owner answered or failed them after this one's claim
/// on them expired (it could not reach the store for longer than the claim's time). Refused whole,
/// so no request is answered twice.
enum ClaimLost {
    static func error(runID: String) -> OffpeakError {
        OffpeakError(
            .temporaryFailure,
            "another process answered requests of run \(runID) after this process's claim on them "
                + "expired; the answers of its last call were not kept")
    }
}

/// A commit by a process whose lease on the run another process took over (it expired while this
/// one could not reach the store, or was stopped): refused, so the call's answers are not kept
/// beside those of the process that now runs it.
enum LeaseLost {
    static func error(runID: String, holder: String) -> OffpeakError {
        OffpeakError(
            .temporaryFailure,
            "run \(runID) was taken over by \(holder) after this process's lease on it expired; "
                + "the answers of its last call were not kept")
    }
}
