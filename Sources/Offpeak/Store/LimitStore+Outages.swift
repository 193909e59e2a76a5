import Foundation

/// Routes found down (`ProviderOutage`), decided once for both engines (`SQLEngine`): a note is one
/// upsert, and an outage long over is dropped as the next is noted, so the table holds a row per
/// route at most and those few only for a day.
extension LimitStore where Self: SQLEngine {
    func noteOutage(_ outage: ProviderOutage) throws(OffpeakError) {
        try writingLightly { sql throws(OffpeakError) in
            try sql.execute(
                "DELETE FROM provider_outages WHERE until_at < \(outage.notedAt.addingTimeInterval(-86_400))")
            try sql.execute(
                """
                INSERT INTO provider_outages (key, until_at, reason, host, noted_at)
                VALUES (\(outage.key), \(outage.until), \(outage.reason), \(outage.host), \(outage.notedAt))
                ON CONFLICT (key) DO UPDATE SET until_at = excluded.until_at, reason = excluded.reason,
                    host = excluded.host, noted_at = excluded.noted_at
                """)
        }
    }

    func outages(now: Date) throws(OffpeakError) -> [String: ProviderOutage] {
        let rows = try rows(
            "SELECT key, until_at, reason, host, noted_at FROM provider_outages WHERE until_at > \(now)")
        var outages: [String: ProviderOutage] = [:]
        for row in rows {
            let outage = ProviderOutage(
                key: try row.string("key"), until: try row.date("until_at"), reason: try row.string("reason"),
                host: try row.string("host"), notedAt: try row.date("noted_at"))
            outages[outage.key] = outage
        }
        return outages
    }
}
