import Foundation
import PostgresNIO

/// The workspace's totals on PostgreSQL, as `SQLiteStore.workspaceTotals` reads them: in one
/// snapshot (`snapshot`), so a scrape never sees spend from after its item counts.
extension PostgresEngine {
    func workspaceTotals() throws(OffpeakError) -> WorkspaceTotals {
        try snapshot { () throws(OffpeakError) -> WorkspaceTotals in
            var totals = WorkspaceTotals()
            totals.spend = try spendRow("SELECT \(unescaped: Self.spendColumns()) FROM ledger")
            totals.lanes = try lanes()
            try totals.readSplits(PostgresSQLConnection(engine: self))
            // A canceled run's items not answered nor failed are the ones `cancel` dropped.
            if let row = try store.query(
                """
                SELECT coalesce(sum(i.total), 0)::bigint AS total, coalesce(sum(i.done), 0)::bigint AS done,
                    coalesce(sum(i.failed), 0)::bigint AS failed,
                    coalesce(sum(i.total - i.done - i.failed) FILTER (WHERE r.state = \(RunState.canceled.rawValue)),
                        0)::bigint AS canceled
                FROM run_items i LEFT JOIN runs r ON r.id = i.run_id
                """
            ).first {
                let columns = PostgresColumns(row, store)
                totals.itemsTotal = try columns("total")
                totals.itemsDone = try columns("done")
                totals.itemsFailed = try columns("failed")
                totals.itemsCanceled = try columns("canceled")
            }
            for row in try store.query("SELECT state, count(*) AS runs FROM runs GROUP BY state") {
                let columns = PostgresColumns(row, store)
                // A state this offpeak does not know is not counted, as SQLite counts only known ones.
                guard let state = RunState(rawValue: try columns("state")) else { continue }
                totals.runs[state] = try columns("runs", as: Int.self)
            }
            totals.deferredReasons = try deferred().map(\.reasonList)
            for row in try store.query(
                """
                SELECT kind, coalesce(sum(hits), 0)::bigint AS hits, coalesce(sum(misses), 0)::bigint AS misses
                FROM cache_counters GROUP BY kind
                """)
            {
                let columns = PostgresColumns(row, store)
                let kind: String = try columns("kind")
                totals.cacheHits[kind] = try columns("hits")
                totals.cacheMisses[kind] = try columns("misses")
            }
            let open = [BatchRecord.State.preparing, .submitted, .ended].map(\.rawValue)
            if let row = try store.query(
                "SELECT count(*) AS open FROM provider_batches WHERE state = ANY(\(open)::text[])"
            ).first {
                totals.batchesInFlight = try PostgresColumns(row, store)("open")
            }
            return totals
        }
    }
}
