import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

extension Store {
    /// This process, as a lease owner: `host:pid`.
    static var processOwner: String {
        var name = [UInt8](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count - 1) == 0
            ? String(decoding: name.prefix { $0 != 0 }, as: UTF8.self) : "localhost"
        return "\(host):\(getpid())"
    }

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
                held.expiresAt > now, Store.ownerIsAlive(held.owner)
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

    /// False only when the owner is a process on this host that is gone.
    static func ownerIsAlive(_ owner: String) -> Bool {
        let parts = owner.split(separator: ":")
        guard parts.count == 2, let pid = Int32(parts[1]) else { return true }
        let here = processOwner.split(separator: ":").first
        guard parts[0] == here else { return true }
        return kill(pid, 0) == 0 || errno == EPERM
    }
}
