import Foundation
import GRDB

extension SQLiteStore {

    /// The run's counts as the `run_items` counters hold them: triggers on `requests` and
    /// `results` keep them in every transaction that changes a row (see
    /// `StoreMigrations.createItemCounters`), so reading them costs the same for 10 items or 100,000.
    static func itemCounts(_ db: Database, runID: String) throws -> ItemCounts {
        try RunRules.itemCounts(SQLiteConnection(db: db), runID: runID)
    }

    /// The same counts, recounted from every request of the run (what the counters must equal).
    static func recountItems(_ db: Database, runID: String) throws -> ItemCounts {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT requests.state AS state, requests.source IN (?, ?) AS step, COUNT(*) AS n,
                    COUNT(results.from_cache OR NULL) AS cached
                FROM requests LEFT JOIN results ON results.request_id = requests.id
                WHERE requests.run_id = ?
                GROUP BY requests.state, step
                """,
            arguments: [RequestSource.chunk.rawValue, RequestSource.reduce.rawValue, runID])
        var counts = ItemCounts()
        for row in rows {
            let count: Int = row["n"] ?? 0
            counts.requests += count
            let step: Bool = row["step"] ?? false
            if step { continue }
            let state: String = row["state"] ?? ""
            counts.total += count
            counts.cached += row["cached"] ?? 0
            if state == RequestRecord.State.done.rawValue { counts.done += count }
            if state == RequestRecord.State.failed.rawValue { counts.failed += count }
        }
        return counts
    }

    func advanceSteps(
        runID: String,
        _ decide: ([RequestRecord], [String: ResultRecord]) -> StepChanges
    ) throws(OffpeakError) -> Bool {
        try write { db in
            let requests = try StoredPayload.expand(
                RequestRecord.filter(Column("run_id") == runID).fetchAll(db), db)
            let rows = try ResultRecord.filter(Column("run_id") == runID).fetchAll(db)
            let results = Dictionary(rows.map { ($0.requestId, $0) }, uniquingKeysWith: { first, _ in first })
            let changes = decide(requests, results)
            guard !changes.isEmpty else { return false }
            let now = Date()
            for id in changes.delete { _ = try RequestRecord.deleteOne(db, key: id) }
            for request in changes.insert { try request.insert(db) }
            for (id, payload, cacheKey) in changes.promote {
                try db.execute(
                    sql: """
                        UPDATE requests SET payload = ?, cache_key = ?,
                        state = \(SQLStates.request(.pending)), error = NULL,
                        updated_at = ? WHERE id = ?
                        """,
                    arguments: [payload, cacheKey, now, id])
            }
            for (id, reason) in changes.fail {
                try db.execute(
                    sql:
                        "UPDATE requests SET state = \(SQLStates.request(.failed)), error = ?, updated_at = ? "
                        + "WHERE id = ?",
                    arguments: [reason, now, id])
            }
            let counts = try SQLiteStore.itemCounts(db, runID: runID)
            try db.execute(
                sql: "UPDATE runs SET items_done = ?, items_failed = ?, updated_at = ? WHERE id = ?",
                arguments: [counts.done, counts.failed, now, runID])
            return changes.addsWork
        }
    }
}
