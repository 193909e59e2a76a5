import Foundation
import GRDB

/// What the reports read of the batch lane. Reads only: the batch lane's writes are in `SQLiteStore+Batches`
/// and `SQLiteStore+BatchResults`.
extension SQLiteStore {
    func batchListings(all: Bool, limit: Int? = nil) throws(OffpeakError) -> [BatchListing] {
        try read { db in
            let open = all ? "" : "WHERE provider_batches.state IN \(SQLStates.openBatches)"
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT provider_batches.*, runs.job AS job FROM provider_batches
                    JOIN runs ON runs.id = provider_batches.run_id \(open)
                    ORDER BY provider_batches.prepared_at DESC, provider_batches.id LIMIT ?
                    """, arguments: [limit ?? -1])
            return try rows.map { row in BatchListing(batch: try BatchRecord(row: row), job: row["job"]) }
        }
    }

    func batchCount() throws(OffpeakError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM provider_batches") ?? 0 }
    }

    func requestsInBatch(runID: String) throws(OffpeakError) -> Int {
        try read { db in
            try Int.fetchOne(
                db,
                sql:
                    "SELECT COUNT(*) FROM requests WHERE run_id = ? AND state = \(SQLStates.request(.inBatch))",
                arguments: [runID]) ?? 0
        }
    }

    func spendByLane() throws(OffpeakError) -> [LaneModelSpend]? {
        try read { db in try SQLiteStore.spendByLane(db) }
    }

    /// `spendByLane()` inside a read that reads more (the metrics' one snapshot).
    static func spendByLane(_ db: Database) throws -> [LaneModelSpend]? {
        let used = """
            SELECT EXISTS (SELECT 1 FROM provider_batches) OR EXISTS (SELECT 1 FROM ledger WHERE flex)
            """
        guard try Bool.fetchOne(db, sql: used) == true else { return nil }
        return try Row.fetchAll(
            db,
            sql: """
                SELECT batch_api, flex, model, unpriced, \(SQLiteStore.spendColumns),
                    COALESCE(SUM(items) FILTER (WHERE NOT cache_hit), 0) AS items
                FROM ledger GROUP BY batch_api, flex, model, unpriced
                ORDER BY batch_api, flex, model, unpriced
                """
        ).map { row in
            LaneModelSpend(
                lane: row["batch_api"] ? .batch : row["flex"] ? .flex : .live, model: row["model"],
                unpriced: row["unpriced"],
                spend: try SQLiteStore.spend(row), items: row["items"])
        }
    }
}
