import Foundation
import PostgresNIO

/// Runs opened, merged and written on PostgreSQL. (The role's reads are in `PostgresEngine+RunReads`,
/// its commits in `+Commit`, canceling and steps in `+Steps`.)
extension PostgresEngine: RunStore {
    func openRun(job: String, creating fresh: RunRecord?, requests: [RequestRecord], lease: LeaseRecord?)
        throws(OffpeakError) -> (run: RunRecord, created: Bool)?
    {
        if let lease { try StoredDate.check(lease) }
        return try store.transaction { () throws(OffpeakError) -> (run: RunRecord, created: Bool)? in
            try lockJob(job)
            if let open = try RunRules.resumableRun(PostgresSQLConnection(engine: self), job: job) {
                return (open, false)
            }
            guard let fresh else { return nil }
            try insertRow(fresh)
            try insertNewRequests(requests)
            if let lease {
                try store.send(
                    """
                    INSERT INTO leases (run_id, owner, acquired_at, heartbeat_at, expires_at, host)
                    VALUES (\(lease.runId), \(lease.owner), \(lease.acquiredAt), \(lease.heartbeatAt),
                        \(lease.expiresAt), \(lease.host))
                    """)
            }
            return (fresh, true)
        }
    }

    func insert(run: RunRecord, requests: [RequestRecord]) throws(OffpeakError) {
        try store.transaction { () throws(OffpeakError) in
            try insertRow(run)
            try insertNewRequests(requests)
        }
    }

    @discardableResult
    func merge(requests: [RequestRecord], into runID: String) throws(OffpeakError) -> [String] {
        try store.transaction { () throws(OffpeakError) -> [String] in
            try lockRun(runID)
            let existing = try self.requests(
                try store.query(
                    """
                    SELECT \(unescaped: Self.requestColumns) FROM requests
                    WHERE run_id = \(runID) AND source IN ('spec', 'chunk', 'reduce') ORDER BY position
                    """))
            var byItem = Dictionary(existing.map { ($0.itemId, $0) }, uniquingKeysWith: { first, _ in first })
            let (removed, dropped) = RequestMerge.removals(
                existing: existing, planned: Set(requests.map(\.itemId)))
            let deleted = removed.map(\.id)
            if !deleted.isEmpty {
                try store.query("DELETE FROM requests WHERE id = ANY(\(deleted)::text[])")
            }
            // Other requests a planned item names (submitted ones), read by item in one statement.
            let others = requests.map(\.itemId).filter { byItem[$0] == nil }
            if !others.isEmpty {
                let rows = try store.query(
                    """
                    SELECT \(unescaped: Self.requestColumns) FROM requests
                    WHERE run_id = \(runID) AND item_id = ANY(\(others)::text[])
                    """)
                for request in try self.requests(rows) where byItem[request.itemId] == nil {
                    byItem[request.itemId] = request
                }
            }
            var inserts: [RequestRecord] = []
            var updates: [RequestRecord] = []
            for request in requests {
                switch RequestMerge.change(request, stored: byItem[request.itemId]) {
                case .insert(let new): inserts.append(new)
                case .update(let changed): updates.append(changed)
                case nil: continue
                }
            }
            try insertRequests(updates, conflict: .replaceByID)
            try insertNewRequests(inserts)
            try store.query(
                """
                UPDATE runs SET items_total = coalesce(
                    (SELECT total FROM run_items WHERE run_id = \(runID)), 0)
                WHERE id = \(runID)
                """)
            return dropped
        }
    }

    func checkpoint(runID: String) throws(OffpeakError) -> CheckpointRecord? {
        guard
            let row = try store.query(
                """
                SELECT run_id, segment, done, last_request_id, updated_at FROM checkpoints
                WHERE run_id = \(runID)
                """
            ).first
        else { return nil }
        let column = PostgresColumns(row, store)
        return CheckpointRecord(
            runId: try column("run_id"), segment: try column("segment"), done: try column("done"),
            lastRequestId: try column("last_request_id"), updatedAt: try column("updated_at"))
    }

    func requests(runID: String, states: [RequestRecord.State]?) throws(OffpeakError) -> [RequestRecord] {
        let rows =
            if let states {
                try store.query(
                    """
                    SELECT \(unescaped: Self.requestColumns) FROM requests
                    WHERE run_id = \(runID) AND state = ANY(\(states.map(\.rawValue))::text[]) ORDER BY position, item_id
                    """)
            } else {
                try store.query(
                    """
                    SELECT \(unescaped: Self.requestColumns) FROM requests WHERE run_id = \(runID)
                    ORDER BY position, item_id
                    """)
            }
        return try self.requests(rows)
    }

    func results(runID: String) throws(OffpeakError) -> [String: ResultRecord] {
        var results: [String: ResultRecord] = [:]
        for row in try store.query(
            "SELECT \(unescaped: Self.resultColumns) FROM results WHERE run_id = \(runID)")
        {
            let result = try self.result(row)
            if results[result.requestId] == nil { results[result.requestId] = result }
        }
        return results
    }
}
