import Foundation
import GRDB

/// The hosts seen, on SQLite (`HostStore`).
extension SQLiteStore: HostStore {
    func tickStarted(host: String, version: String, conditions: String, at now: Date) throws(OffpeakError) {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO hosts (name, version, first_seen_at, tick_started_at, tick_ended_at, tick_status,
                        conditions)
                    VALUES (?, ?, ?, ?, NULL, NULL, ?)
                    ON CONFLICT (name) DO UPDATE SET version = excluded.version,
                        tick_started_at = excluded.tick_started_at, tick_ended_at = NULL, tick_status = NULL,
                        conditions = excluded.conditions
                    """, arguments: [host, version, now, now, conditions])
        }
    }

    func tickEnded(host: String, status: Int32, at now: Date) throws(OffpeakError) {
        try write { db in
            try db.execute(
                sql: "UPDATE hosts SET tick_ended_at = ?, tick_status = ? WHERE name = ?",
                arguments: [now, status, host])
        }
    }

    func hosts(now: Date) throws(OffpeakError) -> [HostRecord] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT h.*,
                        (SELECT COUNT(*) FROM leases l WHERE l.host = h.name AND l.expires_at > ?) AS runs_held,
                        (SELECT COUNT(*) FROM budget_reservations r
                            JOIN leases l ON l.run_id = r.run_id AND l.owner = r.owner
                            WHERE r.host = h.name AND l.expires_at > ?) AS calls_in_flight
                    FROM hosts h
                    """, arguments: [now, now]
            ).map { row in
                HostRecord(
                    name: row["name"], version: row["version"], firstSeenAt: row["first_seen_at"],
                    tickStartedAt: row["tick_started_at"], tickEndedAt: row["tick_ended_at"],
                    tickStatus: row["tick_status"], conditions: row["conditions"], runsHeld: row["runs_held"],
                    callsInFlight: row["calls_in_flight"])
            }
        }
    }
}
