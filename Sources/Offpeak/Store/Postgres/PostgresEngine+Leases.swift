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
            """
            UPDATE leases SET expires_at = \(now - LeaseRecord.releasedAgo)
            WHERE run_id = \(runID) AND owner = \(owner) AND expires_at > \(now)
            """)
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

    /// The run's row locked first, as commits lock it (`lockRun`): claims take turns with each
    /// other and with commits, and each sees the claims and answers committed before it.
    func claimRound(runID: String, owner: String, host: String, limit: Int, ttl: TimeInterval, now: Date)
        throws(OffpeakError) -> [RequestRecord]
    {
        let limit = max(0, limit)
        return try store.transaction { () throws(OffpeakError) -> [RequestRecord] in
            try store.query("SELECT 1 FROM runs WHERE id = \(runID) FOR UPDATE")
            var gone: [String] = []
            for row in try store.query(
                "SELECT owner FROM claims WHERE run_id = \(runID) AND owner <> \(owner)")
            {
                let other = try store.decode(row, as: String.self)
                if !ProcessOwner.isAlive(other) { gone.append(other) }
            }
            if !gone.isEmpty {
                try store.query("DELETE FROM claims WHERE run_id = \(runID) AND owner = ANY(\(gone)::text[])")
            }
            // A request inside another owner's live claim is that owner's until its claim expires.
            let round = try requests(
                try store.query(
                    """
                    WITH others AS (
                        SELECT first_position, last_position FROM claims
                        WHERE run_id = \(runID) AND owner <> \(owner) AND expires_at > \(now))
                    SELECT * FROM (
                        (SELECT \(unescaped: Self.requestColumns) FROM requests r
                        WHERE run_id = \(runID) AND state = \(RequestRecord.State.pending.rawValue)
                            AND NOT EXISTS (SELECT 1 FROM others o
                                WHERE r.position BETWEEN o.first_position AND o.last_position)
                        ORDER BY position LIMIT \(limit))
                        UNION ALL
                        (SELECT \(unescaped: Self.requestColumns) FROM requests r
                        WHERE run_id = \(runID) AND state = \(RequestRecord.State.retrying.rawValue)
                            AND (next_attempt_at IS NULL OR next_attempt_at <= \(now))
                            AND NOT EXISTS (SELECT 1 FROM others o
                                WHERE r.position BETWEEN o.first_position AND o.last_position)
                        ORDER BY position LIMIT \(limit))
                    ) due ORDER BY position LIMIT \(limit)
                    """))
            guard let first = round.first, let last = round.last else {
                try store.query("DELETE FROM claims WHERE run_id = \(runID) AND owner = \(owner)")
                return []
            }
            try store.query(
                """
                INSERT INTO claims (run_id, owner, host, first_position, last_position, expires_at)
                VALUES (\(runID), \(owner), \(host), \(first.position), \(last.position), \(now + ttl))
                ON CONFLICT (run_id, owner) DO UPDATE SET host = excluded.host,
                    first_position = excluded.first_position, last_position = excluded.last_position,
                    expires_at = excluded.expires_at
                """)
            return round
        }
    }

    func releaseClaim(runID: String, owner: String) throws(OffpeakError) {
        try store.query("DELETE FROM claims WHERE run_id = \(runID) AND owner = \(owner)")
    }

    func otherClaims(runID: String, owner: String, now: Date) throws(OffpeakError) -> [ClaimRecord] {
        try store.query(
            """
            SELECT run_id, owner, host, first_position, last_position, expires_at FROM claims
            WHERE run_id = \(runID) AND owner <> \(owner) AND expires_at > \(now) ORDER BY first_position
            """
        ).map { row throws(OffpeakError) -> ClaimRecord in
            let columns = PostgresColumns(row, store)
            return ClaimRecord(
                runId: try columns("run_id"), owner: try columns("owner"), host: try columns("host"),
                firstPosition: try columns("first_position"), lastPosition: try columns("last_position"),
                expiresAt: try columns("expires_at"))
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
