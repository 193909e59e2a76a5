import Foundation

/// The providers' shared limits, decided once for both engines (`SQLEngine`): an ask is checked and
/// granted in one write transaction under its provider's lock (`SQLLock.limits`), so two processes
/// never both take the last request of a minute or the last slot. What nothing reads before the
/// end is sent ahead (`SQLConnection.send`): on PostgreSQL an ask costs two round trips, the lock,
/// the changes and the clean-up going with the read of the grants, and the new grant's insert with
/// the `COMMIT`.
extension LimitStore where Self: SQLEngine {
    func take(_ ask: LimitAsk, settling changes: [LimitChange], now: Date) throws(OffpeakError) -> LimitAnswer
    {
        let key = ask.limits.key
        let decided = try writing { sql throws(OffpeakError) -> LimitDecision in
            try sql.lock(.limits(key))
            try Self.send(changes, sql)
            // The asking owner is alive: its slots are held for another time to live.
            try sql.send(
                """
                UPDATE limit_grants SET expires_at = \(now.addingTimeInterval(ask.slotTTL))
                WHERE owner = \(ask.owner) AND slots > 0
                """)
            try sql.send(
                """
                DELETE FROM limit_grants WHERE key = \(key) AND send_by <= \(now.addingTimeInterval(-MinuteWindow.length))
                    AND (slots <= 0 OR expires_at <= \(now))
                """)
            let window = SharedLimitWindow(grants: try Self.grants(key: key, sql.rows))
            switch window.answer(ask, now: now) {
            case .failure(let wait): return .wait(.wait(until: wait.until, because: wait.because))
            case .success(let granted):
                let rows = try sql.sendReading(
                    """
                    INSERT INTO limit_grants (key, owner, host, requests, tokens, slots, granted_at, send_by, expires_at)
                    VALUES (\(key), \(ask.owner), \(ask.host), \(granted.requests), \(granted.tokens), \(ask.slot ? 1 : 0),
                        \(now), \(ask.sendBy), \(now.addingTimeInterval(ask.slotTTL)))
                    RETURNING id
                    """)
                return .granted(rows, requests: granted.requests, tokens: granted.tokens)
            }
        }
        switch decided {
        case .wait(let wait): return wait
        case .granted(let rows, let requests, let tokens):
            guard let row = try rows.get().first else {
                throw OffpeakError(.ioError, "the store kept a limit's grant without its id")
            }
            return .granted(
                LimitGrant(
                    id: Int64(try row("id", as: Int.self)), requests: requests, tokens: tokens,
                    sendBy: ask.sendBy))
        }
    }

    func settle(_ changes: [LimitChange], now: Date) throws(OffpeakError) {
        guard !changes.isEmpty else { return }
        try writing { sql throws(OffpeakError) in try Self.send(changes, sql) }
    }

    func limitGrants(key: String) throws(OffpeakError) -> [SharedLimitWindow.Grant] {
        try Self.grants(key: key, rows)
    }
}

/// What an ask's transaction decided: wait, or a grant whose id is read once it is committed.
private enum LimitDecision {
    case wait(LimitAnswer)
    case granted(SentSQLRows, requests: Int, tokens: Int)
}

extension LimitStore {
    /// The grants held on `key`, read by `rows` (the engine's, or a transaction's).
    fileprivate static func grants(
        key: String, _ rows: (SQLStatement) throws(OffpeakError) -> [any SQLRow]
    ) throws(OffpeakError) -> [SharedLimitWindow.Grant] {
        try rows(
            "SELECT requests, tokens, slots, send_by, expires_at, owner FROM limit_grants WHERE key = \(key)"
        )
        .map { row throws(OffpeakError) -> SharedLimitWindow.Grant in
            SharedLimitWindow.Grant(
                requests: try row("requests"), tokens: try row("tokens"), slots: try row("slots"),
                sendBy: try row("send_by"), expiresAt: try row("expires_at"), owner: try row("owner"))
        }
    }

    /// Sends what calls did with their grants (`LimitChange.merged`: one change a grant): requests
    /// and tokens given back or added, a slot given back (never below none), a grant's send-by time
    /// brought forward.
    fileprivate static func send(_ changes: [LimitChange], _ sql: any SQLConnection) throws(OffpeakError) {
        for change in LimitChange.merged(changes) {
            let sendBy: SQLStatement =
                change.sentBy.map { "CASE WHEN \($0) < send_by THEN \($0) ELSE send_by END" } ?? "send_by"
            try sql.send(
                """
                UPDATE limit_grants SET requests = requests + \(change.requests), tokens = tokens + \(change.tokens),
                    slots = CASE WHEN slots + \(change.slots) < 0 THEN 0 ELSE slots + \(change.slots) END,
                    send_by = \(sendBy)
                WHERE id = \(Int(change.grant))
                """)
        }
    }
}
