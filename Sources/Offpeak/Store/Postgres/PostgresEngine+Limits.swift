import Foundation
import PostgresNIO

/// The providers' shared limits on PostgreSQL (`LimitStore`), deciding as SQLite does
/// (`SharedLimitWindow`). What SQLite's one writer gives comes from one transaction advisory lock
/// per provider key (`lockLimits`): asks on one provider take turns across processes and hosts,
/// asks on different providers do not wait for each other. An ask costs two round trips: the
/// lock, the changes and the clean-up go ahead of the read of the grants, and the new grant's
/// insert rides with the `COMMIT`.
extension PostgresEngine: LimitStore {
    func take(_ ask: LimitAsk, settling changes: [LimitChange], now: Date) throws(OffpeakError) -> LimitAnswer
    {
        let key = ask.limits.key
        let decided = try store.transaction {
            () throws(OffpeakError) -> LimitDecision in
            try store.send("SELECT pg_advisory_xact_lock(hashtextextended(\("offpeak limits " + key), 0))")
            try sendChanges(changes)
            try store.send(
                """
                UPDATE limit_grants SET expires_at = \(now.addingTimeInterval(ask.slotTTL))
                WHERE owner = \(ask.owner) AND slots > 0
                """)
            try store.send(
                """
                DELETE FROM limit_grants WHERE key = \(key) AND send_by <= \(now.addingTimeInterval(-MinuteWindow.length))
                    AND (slots <= 0 OR expires_at <= \(now))
                """)
            let window = SharedLimitWindow(grants: try limitGrantRows(key: key))
            switch window.answer(ask, now: now) {
            case .failure(let wait): return .wait(.wait(until: wait.until, because: wait.because))
            case .success(let granted):
                let slots = ask.slot ? 1 : 0
                let rows = try store.sendReading(
                    """
                    INSERT INTO limit_grants (key, owner, host, requests, tokens, slots, granted_at, send_by, expires_at)
                    VALUES (\(key), \(ask.owner), \(ask.host), \(granted.requests), \(granted.tokens), \(slots),
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
                throw OffpeakError(
                    .ioError, "PostgreSQL at \(store.url.endpoint) stored a limit's grant without its id")
            }
            let id: Int64 = try PostgresColumns(row, store)("id")
            return .granted(LimitGrant(id: id, requests: requests, tokens: tokens, sendBy: ask.sendBy))
        }
    }

    /// What an ask's transaction decided: wait, or a grant whose id comes with the `COMMIT`.
    private enum LimitDecision {
        case wait(LimitAnswer)
        case granted(PostgresStore.SentRows, requests: Int, tokens: Int)
    }

    func settle(_ changes: [LimitChange], now: Date) throws(OffpeakError) {
        guard !changes.isEmpty else { return }
        try store.transaction { () throws(OffpeakError) in try sendChanges(changes) }
    }

    func limitGrants(key: String) throws(OffpeakError) -> [SharedLimitWindow.Grant] {
        try limitGrantRows(key: key)
    }

    private func limitGrantRows(key: String) throws(OffpeakError) -> [SharedLimitWindow.Grant] {
        try store.query(
            "SELECT requests, tokens, slots, send_by, expires_at, owner FROM limit_grants WHERE key = \(key)"
        ).map { row throws(OffpeakError) -> SharedLimitWindow.Grant in
            let columns = PostgresColumns(row, store)
            return SharedLimitWindow.Grant(
                requests: try columns("requests"), tokens: try columns("tokens"), slots: try columns("slots"),
                sendBy: try columns("send_by"), expiresAt: try columns("expires_at"),
                owner: try columns("owner"))
        }
    }

    /// Sends the changes as one statement, one row each.
    private func sendChanges(_ changes: [LimitChange]) throws(OffpeakError) {
        let merged = LimitChange.merged(changes)
        guard !merged.isEmpty else { return }
        let ids = merged.map(\.grant)
        let requests = merged.map { Int64($0.requests) }
        let tokens = merged.map { Int64($0.tokens) }
        let slots = merged.map { Int64($0.slots) }
        let shorten = merged.map { $0.sentBy != nil }
        let sentBy = merged.map { $0.sentBy?.timeIntervalSince1970 ?? 0 }
        try store.send(
            """
            UPDATE limit_grants g SET requests = g.requests + c.requests, tokens = g.tokens + c.tokens,
                slots = greatest(0, g.slots + c.slots),
                send_by = CASE WHEN c.shorten THEN least(g.send_by, to_timestamp(c.sent_by)) ELSE g.send_by END
            FROM unnest(\(ids)::bigint[], \(requests)::bigint[], \(tokens)::bigint[], \(slots)::bigint[],
                \(shorten)::boolean[], \(sentBy)::double precision[]) AS c(id, requests, tokens, slots, shorten, sent_by)
            WHERE g.id = c.id
            """)
    }
}
