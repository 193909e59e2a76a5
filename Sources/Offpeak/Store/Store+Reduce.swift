import Foundation
import GRDB

/// What the steps of long items change in a run's requests, applied in one transaction.
struct StepChanges: Sendable {
    /// Step rows no longer wanted (a changed document's, or a level no longer reached).
    var delete: [String] = []
    /// New step rows, pending.
    var insert: [RequestRecord] = []
    /// Items whose steps are all answered: their request becomes the final one and is pending.
    var promote: [(id: String, payload: String, cacheKey: String)] = []
    /// Items that cannot be finished because a step failed for good.
    var fail: [(id: String, reason: String)] = []

    /// Whether the changes give the run new requests to send.
    var addsWork: Bool { !insert.isEmpty || !promote.isEmpty }
    var isEmpty: Bool { delete.isEmpty && !addsWork && fail.isEmpty }
}

/// A run's items by state, leaving out the steps of long items (`RequestSource.steps`):
/// a 300-page document is one item however many calls it takes.
struct ItemCounts: Equatable {
    /// Every request of the run, steps too.
    var requests = 0
    var total = 0
    var done = 0
    var failed = 0
    /// Items answered from the answer cache.
    var cached = 0
}

extension SQLiteStore {

    /// The run's counts as the `run_items` counters hold them: triggers on `requests` and
    /// `results` keep them in every transaction that changes a row (see
    /// `StoreMigrations.createItemCounters`), so reading them costs the same for 10 items or 100,000.
    static func itemCounts(_ db: Database, runID: String) throws -> ItemCounts {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT requests, total, done, failed, cached FROM run_items WHERE run_id = ?",
                arguments: [runID])
        else { return ItemCounts() }
        return ItemCounts(
            requests: row["requests"], total: row["total"], done: row["done"], failed: row["failed"],
            cached: row["cached"])
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
