import Foundation

/// Which process probes a batch size (`ProbeKey`), decided once for both engines (`SQLEngine`), as a
/// lease is (`LeaseStore`): one `INSERT … ON CONFLICT … DO UPDATE … WHERE` takes a key that is free,
/// expired, already this owner's, or held by a process of this host that is gone, so two hosts
/// never probe one size at once. The prober gives it back when the size is decided and when its pass
/// ends; a claim whose process died elsewhere lapses with its time to live.
extension AuditStore where Self: SQLEngine {
    func claimProbe(_ key: ProbeKey, owner: String, host: String, ttl: TimeInterval, now: Date)
        throws(OffpeakError) -> String?
    {
        try writing { sql throws(OffpeakError) -> String? in
            let seen = try Self.prober(key, now: nil, sql)
            let dead = seen.map { !ProcessOwner.isAlive($0) } ?? false
            let taken = try sql.rows(
                """
                INSERT INTO probe_claims AS p (job, provider, model, size, owner, host, expires_at)
                VALUES (\(key.job), \(key.provider), \(key.model), \(key.size), \(owner), \(host), \(now + ttl))
                ON CONFLICT (job, provider, model, size) DO UPDATE SET owner = excluded.owner,
                    host = excluded.host, expires_at = excluded.expires_at
                WHERE p.owner = excluded.owner OR p.expires_at <= \(now) OR (\(dead) AND p.owner = \(seen ?? ""))
                RETURNING owner
                """)
            guard taken.isEmpty else { return nil }
            return try Self.prober(key, now: nil, sql) ?? seen ?? ""
        }
    }

    func prober(of key: ProbeKey, now: Date) throws(OffpeakError) -> String? {
        guard let owner = try reading({ sql throws(OffpeakError) in try Self.prober(key, now: now, sql) })
        else { return nil }
        return ProcessOwner.isAlive(owner) ? owner : nil
    }

    func releaseProbes(owner: String, key: ProbeKey?) throws(OffpeakError) {
        if let key {
            try execute(
                """
                DELETE FROM probe_claims WHERE job = \(key.job) AND provider = \(key.provider)
                    AND model = \(key.model) AND size = \(key.size) AND owner = \(owner)
                """)
        } else {
            try execute("DELETE FROM probe_claims WHERE owner = \(owner)")
        }
    }

    /// Who holds `key`: its claim unexpired at `now`, or any (nil `now`).
    private static func prober(_ key: ProbeKey, now: Date?, _ sql: any SQLConnection) throws(OffpeakError)
        -> String?
    {
        try sql.rows(
            """
            SELECT owner FROM probe_claims WHERE job = \(key.job) AND provider = \(key.provider)
                AND model = \(key.model) AND size = \(key.size)
                \(now.map { SQLStatement("AND expires_at > \($0)") } ?? "")
            """
        ).first.map { row throws(OffpeakError) -> String in try row("owner") }
    }
}

/// One batch size of one job's prompts to one model: what a probe claim is for.
struct ProbeKey: Sendable, Hashable {
    var job: String
    var provider: String
    var model: String
    var size: Int
}
