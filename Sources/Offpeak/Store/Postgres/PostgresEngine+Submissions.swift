import Foundation
import PostgresNIO

/// Submissions on PostgreSQL: the job's advisory lock makes finding (or making) its open run and
/// adding to it one decision across processes and hosts, as SQLite's one writer does.
extension PostgresEngine: SubmissionStore {
    func enqueue(_ requests: [RequestRecord], job: String, newRun: RunRecord) throws(OffpeakError)
        -> [String?]
    {
        guard !requests.isEmpty else { return [] }
        return try store.transaction { () throws(OffpeakError) -> [String?] in
            try lockJob(job)
            let open = try resumableRun(job: job)
            let runID = open?.id ?? newRun.id
            var seen: Set<[UInt8]> = []  // by bytes, as the server compares them
            var known: Set<[UInt8]> = []
            if open != nil {
                try lockRun(runID)
                let rows = try store.query(
                    """
                    SELECT item_id FROM requests
                    WHERE run_id = \(runID) AND item_id = ANY(\(requests.map(\.itemId))::text[])
                    """)
                for row in rows { known.insert(Array(try store.decode(row, as: String.self).utf8)) }
            } else {
                try insertRow(newRun)
            }
            var position = -1
            if let row = try store.query(
                "SELECT max(position) FROM requests WHERE run_id = \(runID)"
            ).first {
                let highest: Int? = try store.decode(row, as: Int?.self)
                position = highest ?? -1
            }
            var outcomes: [String?] = []
            outcomes.reserveCapacity(requests.count)
            var adding: [RequestRecord] = []
            for request in requests {
                let item = Array(request.itemId.utf8)
                // An item the open run already has (or that comes twice) is left as it is, and refused.
                guard seen.insert(item).inserted, !known.contains(item) else {
                    outcomes.append(runID)
                    continue
                }
                var request = request
                request.runId = runID
                position += 1
                request.position = position
                adding.append(request)
                outcomes.append(nil)
            }
            guard !adding.isEmpty else { return outcomes }
            try insertNewRequests(adding)
            // Every request of the run, as the counters hold them (`run_items.requests`).
            try store.query(
                """
                UPDATE runs SET items_total = coalesce(
                    (SELECT requests FROM run_items WHERE run_id = \(runID)), 0)
                WHERE id = \(runID)
                """)
            return outcomes
        }
    }

    func request(id: String) throws(OffpeakError) -> (RequestRecord, ResultRecord?)? {
        guard
            let row = try store.query(
                "SELECT \(unescaped: Self.requestColumns) FROM requests WHERE id = \(id)"
            ).first,
            let request = try requests([row]).first
        else { return nil }
        let result = try store.query(
            "SELECT \(unescaped: Self.resultColumns) FROM results WHERE request_id = \(id)"
        ).first
        return (request, try result.map { row throws(OffpeakError) in try self.result(row) })
    }
}
