import Foundation
import GRDB

/// The spec each host runs each job with, on SQLite (`JobSpecStore`).
extension SQLiteStore: JobSpecStore {
    func recordJobSpecs(_ records: [JobSpecRecord]) throws(OffpeakError) {
        guard !records.isEmpty else { return }
        try write { db in
            for record in records {
                try db.execute(
                    sql: """
                        INSERT INTO job_specs (job, host, spec_hash, spec, seen_at) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (job, host) DO UPDATE SET spec_hash = excluded.spec_hash, spec = excluded.spec,
                            seen_at = excluded.seen_at
                        """,
                    arguments: [record.job, record.host, record.specHash, record.spec, record.seenAt])
            }
        }
    }

    func jobSpecs(seenSince since: Date) throws(OffpeakError) -> [JobSpecRecord] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT job, host, spec_hash, spec, seen_at FROM job_specs WHERE seen_at >= ?",
                arguments: [since]
            ).map { row in
                JobSpecRecord(
                    job: row["job"], host: row["host"], specHash: row["spec_hash"], spec: row["spec"],
                    seenAt: row["seen_at"])
            }
        }
    }
}
