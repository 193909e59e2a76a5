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
                arguments: [now - LeaseRecord.releasedAgo, runID, owner, now])
        }
    }

    func unexpiredLeases(now: Date) throws(OffpeakError) -> [LeaseRecord] {
        try read { db in try LeaseRecord.filter(Column("expires_at") > now).fetchAll(db) }
    }
}

/// Claims on rounds of a run's requests (`LeaseStore.claimRound`), in one write transaction each:
/// SQLite's one writer makes claims and commits take turns.
extension SQLiteStore {
    func claimRound(runID: String, owner: String, host: String, limit: Int, ttl: TimeInterval, now: Date)
        throws(OffpeakError) -> [RequestRecord]
    {
        try write { db in
            let gone = try String.fetchAll(
                db, sql: "SELECT owner FROM claims WHERE run_id = ? AND owner <> ?",
                arguments: [runID, owner]
            ).filter { !ProcessOwner.isAlive($0) }
            for dead in gone {
                try db.execute(
                    sql: "DELETE FROM claims WHERE run_id = ? AND owner = ?", arguments: [runID, dead])
            }
            // A request inside another owner's live claim is that owner's until its claim expires.
            let unclaimed = SQL(
                """
                NOT EXISTS (SELECT 1 FROM claims c WHERE c.run_id = requests.run_id AND c.owner <> \(owner)
                    AND c.expires_at > \(now) AND requests.position BETWEEN c.first_position AND c.last_position)
                """)
            let limit = max(0, limit)
            let pending = try RequestRecord.filter(
                Column("run_id") == runID && Column("state") == RequestRecord.State.pending.rawValue
            ).filter(literal: unclaimed).order(Column("position")).limit(limit).fetchAll(db)
            let retries = try RequestRecord.filter(
                Column("run_id") == runID && Column("state") == RequestRecord.State.retrying.rawValue
                    && (Column("next_attempt_at") == nil || Column("next_attempt_at") <= now)
            ).filter(literal: unclaimed).order(Column("position")).limit(limit).fetchAll(db)
            let round = Array((pending + retries).sorted { $0.position < $1.position }.prefix(limit))
            guard let first = round.first, let last = round.last else {
                try db.execute(
                    sql: "DELETE FROM claims WHERE run_id = ? AND owner = ?", arguments: [runID, owner])
                return []
            }
            try db.execute(
                sql: """
                    INSERT INTO claims (run_id, owner, host, first_position, last_position, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (run_id, owner) DO UPDATE SET host = excluded.host,
                        first_position = excluded.first_position, last_position = excluded.last_position,
                        expires_at = excluded.expires_at
                    """,
                arguments: [runID, owner, host, first.position, last.position, now + ttl])
            return try StoredPayload.expand(round, db)
        }
    }

    func releaseClaim(runID: String, owner: String) throws(OffpeakError) {
        try write { db in
            try db.execute(
                sql: "DELETE FROM claims WHERE run_id = ? AND owner = ?", arguments: [runID, owner])
        }
    }

    func otherClaims(runID: String, owner: String, now: Date) throws(OffpeakError) -> [ClaimRecord] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT run_id, owner, host, first_position, last_position, expires_at FROM claims
                    WHERE run_id = ? AND owner <> ? AND expires_at > ? ORDER BY first_position
                    """, arguments: [runID, owner, now]
            ).map { row in
                ClaimRecord(
                    runId: row["run_id"], owner: row["owner"], host: row["host"],
                    firstPosition: row["first_position"], lastPosition: row["last_position"],
                    expiresAt: row["expires_at"])
            }
        }
    }
}
