import Foundation
import PostgresNIO

/// Runs and requests read on PostgreSQL, each a range of an index (as on SQLite).
extension PostgresEngine {
    /// Pages through the answers by request id, so no more than a page is held at once.
    func forEachResult(runID: String, _ body: (ResultRecord) throws -> Void) throws(OffpeakError) {
        var after = ""
        while true {
            let rows = try store.query(
                """
                SELECT \(unescaped: Self.resultColumns) FROM results
                WHERE run_id = \(runID) AND request_id > \(after) ORDER BY request_id LIMIT \(Self.resultPage)
                """)
            for row in rows {
                let result = try self.result(row)
                do { try body(result) } catch let error as OffpeakError { throw error } catch {
                    throw OffpeakError(.ioError, "store error", cause: "\(error)")
                }
                after = result.requestId
            }
            if rows.count < Self.resultPage { return }
        }
    }

    static let resultPage = 500

    func latestResumableRun(job: String) throws(OffpeakError) -> RunRecord? {
        try resumableRun(job: job)
    }

    func latestFinishedRun(job: String, createdBefore: Date?) throws(OffpeakError) -> RunRecord? {
        try newestRun(job: job, states: Self.finishedStates, createdBefore: createdBefore)
    }

    func run(id: String) throws(OffpeakError) -> RunRecord? {
        let rows = try runRows(id: id)
        if let unreadable = rows.unreadable.first { throw unreadable.error }
        return rows.runs.first
    }

    func readableRun(id: String) throws(OffpeakError) -> RunRecord? {
        try runRows(id: id).runs.first
    }

    private func runRows(id: String) throws(OffpeakError) -> RunRows {
        runRows(try store.query("SELECT \(unescaped: Self.runColumns) FROM runs WHERE id = \(id)"))
    }

    func runs(limit: Int) throws(OffpeakError) -> [RunRecord] {
        try runRows(limit: limit).runs
    }

    func runRows(limit: Int) throws(OffpeakError) -> RunRows {
        runRows(
            try store.query(
                "SELECT \(unescaped: Self.runColumns) FROM runs ORDER BY created_at DESC LIMIT \(max(0, limit))"
            ))
    }

    func resumableRuns() throws(OffpeakError) -> [RunRecord] {
        try resumableRunRows().runs
    }

    func resumableRunRows() throws(OffpeakError) -> RunRows {
        runRows(
            try store.query(
                """
                SELECT \(unescaped: Self.runColumns) FROM runs WHERE state = ANY(\(Self.openStates)::text[])
                ORDER BY created_at
                """))
    }
}
