import Foundation

/// The spec each host runs each job with, decided once for both engines (`SQLEngine`): one upsert
/// per job, so hosts recording at once both land.
extension JobSpecStore where Self: SQLEngine {
    func recordJobSpecs(_ records: [JobSpecRecord]) throws(OffpeakError) {
        guard !records.isEmpty else { return }
        try writing { sql throws(OffpeakError) in
            for record in records {
                try sql.execute(
                    """
                    INSERT INTO job_specs (job, host, spec_hash, spec, seen_at)
                    VALUES (\(record.job), \(record.host), \(record.specHash), \(record.spec), \(record.seenAt))
                    ON CONFLICT (job, host) DO UPDATE SET spec_hash = excluded.spec_hash, spec = excluded.spec,
                        seen_at = excluded.seen_at
                    """)
            }
        }
    }

    func jobSpecs(seenSince since: Date) throws(OffpeakError) -> [JobSpecRecord] {
        try rows("SELECT job, host, spec_hash, spec, seen_at FROM job_specs WHERE seen_at >= \(since)").map {
            row throws(OffpeakError) -> JobSpecRecord in
            JobSpecRecord(
                job: try row("job"), host: try row("host"), specHash: try row("spec_hash"),
                spec: try row("spec"), seenAt: try row("seen_at"))
        }
    }
}
