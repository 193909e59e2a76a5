import Foundation
import PostgresNIO

/// Runs and requests read on PostgreSQL, each a range of an index (as on SQLite).
extension PostgresEngine {
    func pendingRequests(runID: String, after position: Int?, limit: Int) throws(OffpeakError)
        -> [RequestRecord]
    {
        try requests(
            try store.query(
                """
                SELECT \(unescaped: Self.requestColumns) FROM requests
                WHERE run_id = \(runID) AND state = \(RequestRecord.State.pending.rawValue)
                    AND position > \(position ?? Int.min)
                ORDER BY position LIMIT \(max(0, limit))
                """))
    }

    func dueRetries(runID: String, by now: Date, limit: Int?) throws(OffpeakError) -> [RequestRecord] {
        try requests(
            try store.query(
                """
                SELECT \(unescaped: Self.requestColumns) FROM requests
                WHERE run_id = \(runID) AND state = \(RequestRecord.State.retrying.rawValue)
                    AND (next_attempt_at IS NULL OR next_attempt_at <= \(now))
                ORDER BY position LIMIT \(limit.map { max(0, $0) })
                """))
    }

    /// The run's counts as the `run_items` counters hold them (`PostgresSchema.version2`).
    func itemCounts(runID: String) throws(OffpeakError) -> ItemCounts {
        guard
            let row = try store.query(
                "SELECT requests, total, done, failed, cached FROM run_items WHERE run_id = \(runID)"
            ).first
        else { return ItemCounts() }
        let column = PostgresColumns(row, store)
        return ItemCounts(
            requests: try column("requests"), total: try column("total"), done: try column("done"),
            failed: try column("failed"), cached: try column("cached"))
    }

    func isCanceled(runID: String) throws(OffpeakError) -> Bool {
        guard
            let row = try store.query("SELECT canceled_at IS NOT NULL FROM runs WHERE id = \(runID)").first
        else { return false }
        return try store.decode(row, as: Bool.self)
    }

    /// Soonest first, those with no time before all (as SQLite orders NULL; the index holds them so).
    func outlines(runID: String) throws(OffpeakError) -> [RequestOutline] {
        try store.query(
            "SELECT id, item_id, state, error, source FROM requests WHERE run_id = \(runID) ORDER BY position"
        ).map { row throws(OffpeakError) in try outline(row) }
    }

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

    func summary(runID: String, state: RequestRecord.State) throws(OffpeakError) -> StateSummary {
        guard
            let row = try store.query(
                "SELECT count(*) FROM requests WHERE run_id = \(runID) AND state = \(state.rawValue)"
            ).first
        else { return StateSummary() }
        let count = try store.decode(row, as: Int.self)
        guard count > 0 else { return StateSummary() }
        // A retry with no time is due first, as SQLite orders NULL.
        let order = state == .retrying ? "next_attempt_at NULLS FIRST, position" : "position"
        guard
            let first = try store.query(
                """
                SELECT id, item_id, state, error, source, next_attempt_at FROM requests
                WHERE run_id = \(runID) AND state = \(state.rawValue) ORDER BY \(unescaped: order) LIMIT 1
                """
            ).first
        else { return StateSummary(count: count) }
        return StateSummary(
            count: count, first: try outline(first),
            firstDue: try PostgresColumns(first, store)("next_attempt_at", as: Date?.self))
    }

    func latestResumableRun(job: String) throws(OffpeakError) -> RunRecord? {
        try resumableRun(job: job)
    }

    func latestFinishedRun(job: String, createdBefore: Date?) throws(OffpeakError) -> RunRecord? {
        try newestRun(job: job, states: Self.finishedStates, createdBefore: createdBefore)
    }

    func answeredItems(job: String) throws(OffpeakError) -> Set<String> {
        var items: Set<String> = []
        let rows = try store.query(
            """
            SELECT DISTINCT item_id FROM requests
            WHERE job = \(job) AND source = \(RequestSource.spec.rawValue) AND state = \(RequestRecord.State.done.rawValue)
            """)
        for row in rows { items.insert(try store.decode(row, as: String.self)) }
        return items
    }

    func itemPrompts(runID: String) throws(OffpeakError) -> [String: ItemPrompt] {
        var prompts: [String: ItemPrompt] = [:]
        let rows = try store.query(
            """
            SELECT item_id, cache_key, sources FROM requests
            WHERE run_id = \(runID) AND source = \(RequestSource.spec.rawValue)
            """)
        for row in rows {
            let column = PostgresColumns(row, store)
            prompts[try column("item_id", as: String.self)] = ItemPrompt(
                cacheKey: try column("cache_key"), sources: try column("sources"))
        }
        return prompts
    }

    func itemAnswers(runID: String) throws(OffpeakError) -> [String: String] {
        var answers: [String: String] = [:]
        let rows = try store.query(
            """
            SELECT q.item_id, a.text FROM requests q JOIN results a ON a.request_id = q.id
            WHERE q.run_id = \(runID) AND q.source = \(RequestSource.spec.rawValue)
            """)
        for row in rows {
            let column = PostgresColumns(row, store)
            answers[try column("item_id", as: String.self)] = try column("text")
        }
        return answers
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
