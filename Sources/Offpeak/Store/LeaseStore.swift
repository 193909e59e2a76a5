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

    func releaseLease(runID: String, owner: String) throws(OffpeakError)
}

extension LeaseStore {
    func acquireLease(runID: String, owner: String, host: String, ttl: TimeInterval) throws(OffpeakError)
        -> String?
    {
        try acquireLease(runID: runID, owner: owner, host: host, ttl: ttl, now: Date())
    }
}
