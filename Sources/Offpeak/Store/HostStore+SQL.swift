import Foundation

/// The hosts seen, decided once for both engines (`SQLEngine`): a tick's start is one upsert, so
/// two ticks of new hosts starting at once both land.
extension HostStore where Self: SQLEngine {
    func tickStarted(host: String, version: String, conditions: String, at now: Date) throws(OffpeakError) {
        try execute(
            """
            INSERT INTO hosts (name, version, first_seen_at, tick_started_at, tick_ended_at, tick_status, conditions)
            VALUES (\(host), \(version), \(now), \(now), NULL, NULL, \(conditions))
            ON CONFLICT (name) DO UPDATE SET version = excluded.version, tick_started_at = excluded.tick_started_at,
                tick_ended_at = NULL, tick_status = NULL, conditions = excluded.conditions
            """)
    }

    func tickEnded(host: String, status: Int32, at now: Date) throws(OffpeakError) {
        try execute(
            "UPDATE hosts SET tick_ended_at = \(now), tick_status = \(Int(status)) WHERE name = \(host)")
    }

    func hosts(now: Date) throws(OffpeakError) -> [HostRecord] {
        try rows(
            """
            SELECT h.name, h.version, h.first_seen_at, h.tick_started_at, h.tick_ended_at, h.tick_status,
                h.conditions,
                (SELECT COUNT(*) FROM leases l WHERE l.host = h.name AND l.expires_at > \(now)) AS runs_held,
                (SELECT COUNT(*) FROM budget_reservations r WHERE r.host = h.name AND (
                    EXISTS (SELECT 1 FROM leases l
                        WHERE l.run_id = r.run_id AND l.owner = r.owner AND l.expires_at > \(now))
                    OR EXISTS (SELECT 1 FROM claims c
                        WHERE c.run_id = r.run_id AND c.owner = r.owner AND c.expires_at > \(now))
                )) AS calls_in_flight
            FROM hosts h
            """
        ).map { row throws(OffpeakError) -> HostRecord in
            HostRecord(
                name: try row("name"), version: try row("version"), firstSeenAt: try row("first_seen_at"),
                tickStartedAt: try row("tick_started_at"), tickEndedAt: try row("tick_ended_at"),
                tickStatus: try row("tick_status", as: Int?.self).map { Int32(truncatingIfNeeded: $0) },
                conditions: try row("conditions"), runsHeld: try row("runs_held"),
                callsInFlight: try row("calls_in_flight"))
        }
    }
}
