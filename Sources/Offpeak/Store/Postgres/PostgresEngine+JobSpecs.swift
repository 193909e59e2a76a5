import Foundation
import PostgresNIO

/// The spec each host runs each job with, on PostgreSQL (`JobSpecStore`): one upsert per job, so
/// hosts recording at once both land.
extension PostgresEngine: JobSpecStore {
    func recordJobSpecs(_ records: [JobSpecRecord]) throws(OffpeakError) {
        guard !records.isEmpty else { return }
        try store.transaction { () throws(OffpeakError) in
            for record in records {
                try store.query(
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
        let rows = try store.query(
            "SELECT job, host, spec_hash, spec, seen_at FROM job_specs WHERE seen_at >= \(since)")
        return try rows.map { row throws(OffpeakError) -> JobSpecRecord in
            let column = PostgresColumns(row, store)
            return JobSpecRecord(
                job: try column("job"), host: try column("host"), specHash: try column("spec_hash"),
                spec: try column("spec"), seenAt: try column("seen_at"))
        }
    }
}
