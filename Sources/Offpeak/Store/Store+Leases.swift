import Foundation
import GRDB

extension SQLiteStore {
    func acquireLease(runID: String, owner: String, host: String, ttl: TimeInterval, now: Date = Date())
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
                runId: runID, owner: owner, acquiredAt: now, heartbeatAt: now, expiresAt: now + ttl,
                host: host
            ).save(db)
            return nil
        }
    }

    func releaseLease(runID: String, owner: String) throws(OffpeakError) {
        let now = Date()
        try write { db in
            try db.execute(
                sql: "UPDATE leases SET expires_at = ? WHERE run_id = ? AND owner = ? AND expires_at > ?",
                arguments: [now, runID, owner, now])
        }
    }

    func unexpiredLeases(now: Date) throws(OffpeakError) -> [LeaseRecord] {
        try read { db in try LeaseRecord.filter(Column("expires_at") > now).fetchAll(db) }
    }
}
