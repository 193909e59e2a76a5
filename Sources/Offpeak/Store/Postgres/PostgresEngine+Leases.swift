import Foundation
import PostgresNIO

/// Leases on PostgreSQL: taking one is a single `INSERT … ON CONFLICT … DO UPDATE … WHERE`, which the
/// server applies to the row as it stands when it locks it, so two processes (or hosts) asking at
/// once never both get it.
extension PostgresEngine: LeaseStore {
    func acquireLease(runID: String, owner: String, host: String, ttl: TimeInterval, now: Date)
        throws(OffpeakError)
        -> String?
    {
        // Whether the holder seen now is a process of this host that is gone: only this process can
        // tell, so it is asked first, and the statement takes the lease from that holder only if it
        // still holds it.
        let seen = try holder(runID: runID)
        let dead = seen.map { !ProcessOwner.isAlive($0) } ?? false
        let lease = LeaseRecord(
            runId: runID, owner: owner, acquiredAt: now, heartbeatAt: now, expiresAt: now + ttl,
            host: host)
        try StoredDate.check(lease)
        let taken = try store.query(
            """
            INSERT INTO leases AS l (run_id, owner, acquired_at, heartbeat_at, expires_at, host)
            VALUES (\(runID), \(owner), \(now), \(now), \(lease.expiresAt), \(host))
            ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, acquired_at = excluded.acquired_at,
                heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at, host = excluded.host
            WHERE l.owner = excluded.owner OR l.expires_at <= \(now) OR (\(dead) AND l.owner = \(seen ?? ""))
            RETURNING owner
            """)
        guard taken.isEmpty else { return nil }
        // Someone else holds it (perhaps not the holder seen first, if it changed hands meanwhile).
        return try holder(runID: runID) ?? seen ?? ""
    }

    func releaseLease(runID: String, owner: String) throws(OffpeakError) {
        let now = Date()
        try store.query(
            "UPDATE leases SET expires_at = \(now) WHERE run_id = \(runID) AND owner = \(owner) AND expires_at > \(now)"
        )
    }

    func unexpiredLeases(now: Date) throws(OffpeakError) -> [LeaseRecord] {
        try store.query(
            """
            SELECT run_id, owner, acquired_at, heartbeat_at, expires_at, host FROM leases
            WHERE expires_at > \(now) ORDER BY run_id
            """
        ).map { row throws(OffpeakError) -> LeaseRecord in
            let columns = PostgresColumns(row, store)
            return LeaseRecord(
                runId: try columns("run_id"), owner: try columns("owner"),
                acquiredAt: try columns("acquired_at"),
                heartbeatAt: try columns("heartbeat_at"), expiresAt: try columns("expires_at"),
                host: try columns("host"))
        }
    }

    /// The owner of the run's lease, live or not.
    private func holder(runID: String) throws(OffpeakError) -> String? {
        guard let row = try store.query("SELECT owner FROM leases WHERE run_id = \(runID)").first else {
            return nil
        }
        return try store.decode(row, as: String.self)
    }
}
