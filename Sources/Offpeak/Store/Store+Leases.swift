import Foundation
import GRDB

extension Store {
    /// This process, as a lease owner: `host:pid` (see `ProcessOwner`).
    static var processOwner: String { ProcessOwner.current }

    /// Takes the run's lease for `owner` unless another owner holds a live one.
    ///
    /// A lease is live until it expires, except that a lease of a process on this host that no longer
    /// exists (killed with -9) is taken over at once.
    /// - Returns: `nil` on success, else the owner holding it.
    func acquireLease(runID: String, owner: String, ttl: TimeInterval, now: Date = Date())
        throws(OffpeakError)
        -> String?
    {
        try write { db in
            if let held = try LeaseRecord.fetchOne(db, key: runID), held.owner != owner,
                held.expiresAt > now, ProcessOwner.isAlive(held.owner)
            {
                return held.owner
            }
            try LeaseRecord(
                runId: runID, owner: owner, acquiredAt: now, heartbeatAt: now, expiresAt: now + ttl
            ).save(db)
            return nil
        }
    }

    func releaseLease(runID: String, owner: String) throws(OffpeakError) {
        try write { db in
            try db.execute(
                sql: "DELETE FROM leases WHERE run_id = ? AND owner = ?", arguments: [runID, owner])
        }
    }
}
