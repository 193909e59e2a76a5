import Foundation

/// Leases and claims, decided once for both engines (`SQLEngine`).
///
/// A lease is taken by one `INSERT … ON CONFLICT … DO UPDATE … WHERE`, which the engine applies to
/// the row as it stands when it writes it, so two processes (or hosts) asking at once never both get
/// it. A claim is taken with the run locked (`SQLLock.run`), as commits lock it: claims take turns with
/// each other and with commits, and each sees the claims and answers committed before it.
extension LeaseStore where Self: SQLEngine {
    func acquireLease(runID: String, owner: String, host: String, ttl: TimeInterval, now: Date)
        throws(OffpeakError)
        -> String?
    {
        let lease = LeaseRecord(
            runId: runID, owner: owner, acquiredAt: now, heartbeatAt: now, expiresAt: now + ttl, host: host)
        try StoredDate.check(lease)
        return try writing { sql throws(OffpeakError) -> String? in
            // Whether the holder seen now is a process of this host that is gone: only this process
            // can tell, so it is asked first, and the statement takes the lease from that holder only
            // if it still holds it.
            let seen = try Self.holder(runID: runID, sql)
            let dead = seen.map { !ProcessOwner.isAlive($0) } ?? false
            let taken = try sql.rows(
                """
                INSERT INTO leases AS l (run_id, owner, acquired_at, heartbeat_at, expires_at, host)
                VALUES (\(runID), \(owner), \(now), \(now), \(lease.expiresAt), \(host))
                ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, acquired_at = excluded.acquired_at,
                    heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at, host = excluded.host
                WHERE l.owner = excluded.owner OR l.expires_at <= \(now) OR (\(dead) AND l.owner = \(seen ?? ""))
                RETURNING owner
                """)
            guard taken.isEmpty else {
                // Taken over: the calls the holder before left in flight are booked (`LostCalls`).
                if let seen, seen != owner {
                    try BudgetRules.settleStaleReservations(sql, runID: runID, now: Date())
                }
                return nil
            }
            // Someone else holds it (perhaps not the holder seen first, if it changed hands meanwhile).
            return try Self.holder(runID: runID, sql) ?? seen ?? ""
        }
    }

    func releaseLease(runID: String, owner: String) throws(OffpeakError) {
        let now = Date()
        try execute(
            """
            UPDATE leases SET expires_at = \(now - LeaseRecord.releasedAgo)
            WHERE run_id = \(runID) AND owner = \(owner) AND expires_at > \(now)
            """)
    }

    func unexpiredLeases(now: Date) throws(OffpeakError) -> [LeaseRecord] {
        try rows(
            """
            SELECT run_id, owner, acquired_at, heartbeat_at, expires_at, host FROM leases
            WHERE expires_at > \(now) ORDER BY run_id
            """
        ).map { row throws(OffpeakError) -> LeaseRecord in
            LeaseRecord(
                runId: try row("run_id"), owner: try row("owner"), acquiredAt: try row("acquired_at"),
                heartbeatAt: try row("heartbeat_at"), expiresAt: try row("expires_at"), host: try row("host"))
        }
    }

    func claimRound(runID: String, owner: String, host: String, limit: Int, ttl: TimeInterval, now: Date)
        throws(OffpeakError) -> [RequestRecord]
    {
        let limit = max(0, limit)
        return try writing { sql throws(OffpeakError) -> [RequestRecord] in
            try sql.lock(.run(runID))
            // Claims of processes of this host that are gone are dropped, as their leases are taken
            // over at once.
            var gone: [String] = []
            for row in try sql.rows("SELECT owner FROM claims WHERE run_id = \(runID) AND owner <> \(owner)")
            {
                let other: String = try row("owner")
                if !ProcessOwner.isAlive(other) { gone.append(other) }
            }
            if !gone.isEmpty {
                try sql.execute("DELETE FROM claims WHERE run_id = \(runID) AND owner IN \(list: gone)")
                try BudgetRules.settleStaleReservations(sql, runID: runID, now: Date())
            }
            // A request inside another owner's live claim is that owner's until its claim expires.
            // Pending and retrying requests are each taken in position order from their own index,
            // then merged.
            let unclaimed: SQLStatement = """
                NOT EXISTS (SELECT 1 FROM claims c WHERE c.run_id = \(runID) AND c.owner <> \(owner)
                    AND c.expires_at > \(now) AND r.position BETWEEN c.first_position AND c.last_position)
                """
            let columns = RequestRecord.columns
            let round = try sql.requests(
                """
                SELECT \(unescaped: columns) FROM (
                    SELECT \(unescaped: columns) FROM requests r
                    WHERE run_id = \(runID) AND state = \(unescaped: SQLStates.request(.pending)) AND \(unclaimed)
                    ORDER BY position LIMIT \(limit)) AS pending
                UNION ALL
                SELECT \(unescaped: columns) FROM (
                    SELECT \(unescaped: columns) FROM requests r
                    WHERE run_id = \(runID) AND state = \(unescaped: SQLStates.request(.retrying))
                        AND (next_attempt_at IS NULL OR next_attempt_at <= \(now)) AND \(unclaimed)
                    ORDER BY position LIMIT \(limit)) AS retrying
                ORDER BY position LIMIT \(limit)
                """)
            guard let first = round.first, let last = round.last else {
                try sql.execute("DELETE FROM claims WHERE run_id = \(runID) AND owner = \(owner)")
                return []
            }
            try sql.execute(
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
        try execute("DELETE FROM claims WHERE run_id = \(runID) AND owner = \(owner)")
    }

    func otherClaims(runID: String, owner: String, now: Date) throws(OffpeakError) -> [ClaimRecord] {
        try rows(
            """
            SELECT run_id, owner, host, first_position, last_position, expires_at FROM claims
            WHERE run_id = \(runID) AND owner <> \(owner) AND expires_at > \(now) ORDER BY first_position
            """
        ).map { row throws(OffpeakError) -> ClaimRecord in
            ClaimRecord(
                runId: try row("run_id"), owner: try row("owner"), host: try row("host"),
                firstPosition: try row("first_position"), lastPosition: try row("last_position"),
                expiresAt: try row("expires_at"))
        }
    }

    /// The owner of the run's lease, live or not.
    private static func holder(runID: String, _ sql: any SQLConnection) throws(OffpeakError) -> String? {
        try sql.rows("SELECT owner FROM leases WHERE run_id = \(runID)").first.map {
            row throws(OffpeakError) in
            try row("owner")
        }
    }
}
