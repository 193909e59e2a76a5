import Foundation
import GRDB

extension SQLiteStore {
    func workspaceTotals() throws(OffpeakError) -> WorkspaceTotals {
        try read { db in
            var totals = WorkspaceTotals()
            if let row = try Row.fetchOne(db, sql: "SELECT \(SQLiteStore.spendColumns) FROM ledger") {
                totals.spend = try SQLiteStore.spend(row)
            }
            totals.lanes = try SQLiteStore.spendByLane(db)
            try totals.readSplits(SQLiteConnection(db: db))
            if let items = try Row.fetchOne(
                db,
                sql: """
                    SELECT COALESCE(SUM(total), 0) AS total, COALESCE(SUM(done), 0) AS done,
                        COALESCE(SUM(failed), 0) AS failed FROM run_items
                    """)
            {
                totals.itemsTotal = items["total"]
                totals.itemsDone = items["done"]
                totals.itemsFailed = items["failed"]
            }
            // A canceled run's items not answered nor failed are the ones `cancel` dropped.
            totals.itemsCanceled =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT COALESCE(SUM(items.total - items.done - items.failed), 0)
                        FROM runs JOIN run_items AS items ON items.run_id = runs.id
                        WHERE runs.state = ?
                        """, arguments: [RunState.canceled.rawValue]) ?? 0
            // A count per state, each over its range of `runs_by_state`.
            for state in RunState.allCases {
                let count =
                    try Int.fetchOne(
                        db, sql: "SELECT COUNT(*) FROM runs WHERE state = ?", arguments: [state.rawValue])
                    ?? 0
                if count > 0 { totals.runs[state] = count }
            }
            totals.deferredReasons = try DeferredRecord.filter(Column("released_at") == nil)
                .order(Column("deferred_at"), Column("id")).fetchAll(db).map(\.reasonList)
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT kind, COALESCE(SUM(hits), 0) AS hits, COALESCE(SUM(misses), 0) AS misses
                    FROM cache_counters GROUP BY kind
                    """)
            {
                let kind: String = row["kind"]
                totals.cacheHits[kind] = row["hits"]
                totals.cacheMisses[kind] = row["misses"]
            }
            let open: [BatchRecord.State] = [.preparing, .submitted, .ended]
            totals.batchesInFlight =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM provider_batches WHERE state IN (?, ?, ?)",
                    arguments: StatementArguments(open.map(\.rawValue))) ?? 0
            return totals
        }
    }
}
