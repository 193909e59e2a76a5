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
}

extension LeaseStore {
    /// The leases held at `now`, by run: unexpired, and not held by a process of this host that is
    /// gone (`ProcessOwner.isAlive`); what `acquireLease` would refuse to anyone else.
    func liveLeases(now: Date) throws(OffpeakError) -> [String: LeaseRecord] {
        let live = try unexpiredLeases(now: now).filter { ProcessOwner.isAlive($0.owner) }
        return Dictionary(live.map { ($0.runId, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func acquireLease(runID: String, owner: String, host: String, ttl: TimeInterval) throws(OffpeakError)
        -> String?
    {
        try acquireLease(runID: runID, owner: owner, host: host, ttl: ttl, now: Date())
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
