import Foundation
import PostgresNIO

/// Submissions on PostgreSQL: the job's advisory lock makes finding (or making) its open run and
/// adding to it one decision across processes and hosts, as SQLite's one writer does.
///
/// An item the open run already has is found by the insert itself (`ON CONFLICT (run_id, item_id)
/// DO NOTHING`, which probes the run's unique index row by row), not by a query first: the planner
/// chose that query's plan from the table's statistics, which autovacuum refreshes only after a
/// while, and while they still described an empty table it read every request of the run for each
/// chunk (100,000 lines: 5.7 s of a submit's 10 s of statements, the chunk's time growing with the
/// run). The requests are numbered as if none were known; when one was, the ones written are
/// numbered again without the gaps (rare: a line resubmitted).
extension PostgresEngine: SubmissionStore {
    func enqueue(_ requests: [RequestRecord], job: String, newRun: RunRecord) throws(OffpeakError)
        -> [String?]
    {
        guard !requests.isEmpty else { return [] }
        return try store.transaction { () throws(OffpeakError) -> [String?] in
            try lockJob(job)
            let open = try RunRules.resumableRun(PostgresSQLConnection(engine: self), job: job)
            let runID = open?.id ?? newRun.id
            if open != nil {
                try lockRun(runID)
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
            let first = position + 1
            var seen: Set<[UInt8]> = []  // by bytes, as the server compares them
            var outcomes: [String?] = []
            outcomes.reserveCapacity(requests.count)
            var adding: [RequestRecord] = []
            var slots: [Int] = []  // where each of `adding` is in `outcomes`
            for request in requests {
                // An item that comes twice is refused the second time.
                guard seen.insert(Array(request.itemId.utf8)).inserted else {
                    outcomes.append(runID)
                    continue
                }
                var request = request
                request.runId = runID
                position += 1
                request.position = position
                slots.append(outcomes.count)
                adding.append(request)
                outcomes.append(nil)
            }
            guard !adding.isEmpty else { return outcomes }
            let written = Set(try insertRequests(adding))
            if written.count < adding.count {
                try renumber(
                    adding, written: written, from: first, outcomes: &outcomes, slots: slots, runID: runID)
            }
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

    /// Marks the requests the run had already (`adding` not `written`) as refused, and numbers the
    /// ones written from `first` on, in their order, as if the others had never come.
    private func renumber(
        _ adding: [RequestRecord], written: Set<String>, from first: Int, outcomes: inout [String?],
        slots: [Int], runID: String
    ) throws(OffpeakError) {
        var ids: [String] = []
        var positions: [Int] = []
        var next = first
        for (request, slot) in zip(adding, slots) {
            guard written.contains(request.id) else {
                outcomes[slot] = runID
                continue
            }
            if request.position != next {
                ids.append(request.id)
                positions.append(next)
            }
            next += 1
        }
        guard !ids.isEmpty else { return }
        try store.query(
            """
            UPDATE requests SET position = u.position
            FROM unnest(\(ids)::text[], \(positions)::bigint[]) AS u(id, position)
            WHERE requests.id = u.id
            """)
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
