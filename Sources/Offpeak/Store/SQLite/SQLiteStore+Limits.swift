import Foundation
import GRDB

/// The providers' shared limits on SQLite (`LimitStore`): an ask is checked and granted in one write
/// transaction, and SQLite lets one writer in at a time, so two processes never both take the last
/// request of a minute or the last slot.
extension SQLiteStore: LimitStore {
    func take(_ ask: LimitAsk, settling changes: [LimitChange], now: Date) throws(OffpeakError) -> LimitAnswer
    {
        try write { db in
            try SQLiteStore.apply(changes, db)
            // The asking owner is alive: its slots are held for another time to live.
            try db.execute(
                sql: "UPDATE limit_grants SET expires_at = ? WHERE owner = ? AND slots > 0",
                arguments: [now.addingTimeInterval(ask.slotTTL), ask.owner])
            try db.execute(
                sql: """
                    DELETE FROM limit_grants WHERE key = ? AND send_by <= ? AND (slots <= 0 OR expires_at <= ?)
                    """, arguments: [ask.limits.key, now.addingTimeInterval(-MinuteWindow.length), now])
            let window = SharedLimitWindow(grants: try SQLiteStore.limitGrants(key: ask.limits.key, db))
            switch window.answer(ask, now: now) {
            case .failure(let wait): return .wait(until: wait.until, because: wait.because)
            case .success(let granted):
                try db.execute(
                    sql: """
                        INSERT INTO limit_grants (key, owner, host, requests, tokens, slots, granted_at, send_by,
                            expires_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        ask.limits.key, ask.owner, ask.host, granted.requests, granted.tokens,
                        ask.slot ? 1 : 0,
                        now, ask.sendBy, now.addingTimeInterval(ask.slotTTL),
                    ])
                return .granted(
                    LimitGrant(
                        id: db.lastInsertedRowID, requests: granted.requests, tokens: granted.tokens,
                        sendBy: ask.sendBy))
            }
        }
    }

    func settle(_ changes: [LimitChange], now: Date) throws(OffpeakError) {
        guard !changes.isEmpty else { return }
        try write { db in try SQLiteStore.apply(changes, db) }
    }

    func limitGrants(key: String) throws(OffpeakError) -> [SharedLimitWindow.Grant] {
        try read { db in try SQLiteStore.limitGrants(key: key, db) }
    }

    static func limitGrants(key: String, _ db: Database) throws -> [SharedLimitWindow.Grant] {
        try Row.fetchAll(
            db,
            sql: "SELECT requests, tokens, slots, send_by, expires_at, owner FROM limit_grants WHERE key = ?",
            arguments: [key]
        ).map { row in
            SharedLimitWindow.Grant(
                requests: row["requests"], tokens: row["tokens"], slots: row["slots"], sendBy: row["send_by"],
                expiresAt: row["expires_at"], owner: row["owner"])
        }
    }

    private static func apply(_ changes: [LimitChange], _ db: Database) throws {
        for change in LimitChange.merged(changes) {
            try db.execute(
                sql: """
                    UPDATE limit_grants SET requests = requests + ?, tokens = tokens + ?, slots = max(0, slots + ?),
                        send_by = CASE WHEN ? IS NOT NULL AND ? < send_by THEN ? ELSE send_by END
                    WHERE id = ?
                    """,
                arguments: [
                    change.requests, change.tokens, change.slots, change.sentBy, change.sentBy, change.sentBy,
                    change.grant,
                ])
        }
    }
}
