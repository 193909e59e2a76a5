import Foundation
import PostgresNIO

/// The hosts seen, on PostgreSQL (`HostStore`): a tick's start is one upsert, so two ticks of new
/// hosts starting at once both land.
extension PostgresEngine: HostStore {
    func tickStarted(host: String, version: String, conditions: String, at now: Date) throws(OffpeakError) {
        try store.send(
            """
            INSERT INTO hosts (name, version, first_seen_at, tick_started_at, tick_ended_at, tick_status, conditions)
            VALUES (\(host), \(version), \(now), \(now), NULL, NULL, \(conditions))
            ON CONFLICT (name) DO UPDATE SET version = excluded.version, tick_started_at = excluded.tick_started_at,
                tick_ended_at = NULL, tick_status = NULL, conditions = excluded.conditions
            """)
    }

    func tickEnded(host: String, status: Int32, at now: Date) throws(OffpeakError) {
        try store.send(
            "UPDATE hosts SET tick_ended_at = \(now), tick_status = \(status) WHERE name = \(host)")
    }

    func hosts(now: Date) throws(OffpeakError) -> [HostRecord] {
        let rows = try store.query(
            """
            SELECT h.name, h.version, h.first_seen_at, h.tick_started_at, h.tick_ended_at, h.tick_status,
                h.conditions,
                (SELECT count(*) FROM leases l WHERE l.host = h.name AND l.expires_at > \(now)) AS runs_held,
                (SELECT count(*) FROM budget_reservations r
                    JOIN leases l ON l.run_id = r.run_id AND l.owner = r.owner
                    WHERE r.host = h.name AND l.expires_at > \(now)) AS calls_in_flight
            FROM hosts h
            """)
        return try rows.map { row throws(OffpeakError) -> HostRecord in
            let column = PostgresColumns(row, store)
            return HostRecord(
                name: try column("name"), version: try column("version"),
                firstSeenAt: try column("first_seen_at"), tickStartedAt: try column("tick_started_at"),
                tickEndedAt: try column("tick_ended_at"), tickStatus: try column("tick_status"),
                conditions: try column("conditions"), runsHeld: try column("runs_held", as: Int.self),
                callsInFlight: try column("calls_in_flight", as: Int.self))
        }
    }
}
