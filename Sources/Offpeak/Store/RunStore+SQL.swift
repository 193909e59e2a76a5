import Foundation

/// The runs' reads that both engines make alike, written once (`SQLEngine`): each a range of an
/// index, so its cost depends on how much it returns, not on how big the run is. (The run loop
/// plans a round at a time from these: `RunSession.nextCalls`.)
///
/// States are written into the statement as literals (`SQLStates`), never bound: only then may
/// either engine read a partial index whose condition names the state (`requests_retrying`).
extension RunStore where Self: SQLEngine {
    func retryingRequests() throws(OffpeakError) -> [RequestRecord] {
        try alone { sql throws(OffpeakError) -> [RequestRecord] in
            try sql.requests(
                """
                SELECT \(unescaped: RequestRecord.columns) FROM requests
                WHERE state = \(unescaped: SQLStates.request(.retrying)) ORDER BY next_attempt_at NULLS FIRST
                """)
        }
    }

    func pendingRequests(runID: String, after position: Int?, limit: Int) throws(OffpeakError)
        -> [RequestRecord]
    {
        let after: SQLStatement = position.map { "AND position > \($0)" } ?? ""
        return try alone { sql throws(OffpeakError) -> [RequestRecord] in
            try sql.requests(
                """
                SELECT \(unescaped: RequestRecord.columns) FROM requests
                WHERE run_id = \(runID) AND state = \(unescaped: SQLStates.request(.pending)) \(after)
                ORDER BY position LIMIT \(max(0, limit))
                """)
        }
    }

    func dueRetries(runID: String, by now: Date, limit: Int?) throws(OffpeakError) -> [RequestRecord] {
        let most: SQLStatement = limit.map { "LIMIT \(max(0, $0))" } ?? ""
        return try alone { sql throws(OffpeakError) -> [RequestRecord] in
            try sql.requests(
                """
                SELECT \(unescaped: RequestRecord.columns) FROM requests
                WHERE run_id = \(runID) AND state = \(unescaped: SQLStates.request(.retrying))
                    AND (next_attempt_at IS NULL OR next_attempt_at <= \(now))
                ORDER BY position \(most)
                """)
        }
    }

    func itemCounts(runID: String) throws(OffpeakError) -> ItemCounts {
        try alone { sql throws(OffpeakError) in try RunRules.itemCounts(sql, runID: runID) }
    }

    func isCanceled(runID: String) throws(OffpeakError) -> Bool {
        try rows("SELECT canceled_at IS NOT NULL AS canceled FROM runs WHERE id = \(runID)").first.map {
            row throws(OffpeakError) in try row("canceled", as: Bool.self)
        } ?? false
    }

    func outlines(runID: String) throws(OffpeakError) -> [RequestOutline] {
        try rows(
            "SELECT id, item_id, state, error, source FROM requests WHERE run_id = \(runID) ORDER BY position"
        ).map { row throws(OffpeakError) in try RequestOutline(row: row) }
    }

    func summary(runID: String, state: RequestRecord.State, examples: Int) throws(OffpeakError)
        -> StateSummary
    {
        try reading { sql throws(OffpeakError) -> StateSummary in
            let count =
                try sql.rows(
                    "SELECT COUNT(*) AS n FROM requests WHERE run_id = \(runID) AND state = \(state.rawValue)"
                ).first.map { row throws(OffpeakError) in try row("n", as: Int.self) } ?? 0
            guard count > 0 else { return StateSummary() }
            // A retry with no time is due first.
            let order = state == .retrying ? "next_attempt_at NULLS FIRST, position" : "position"
            let rows = try sql.rows(
                """
                SELECT id, item_id, state, error, source, next_attempt_at FROM requests
                WHERE run_id = \(runID) AND state = \(state.rawValue) ORDER BY \(unescaped: order)
                LIMIT \(max(1, examples))
                """)
            return StateSummary(
                count: count,
                examples: try rows.map { row throws(OffpeakError) in try RequestOutline(row: row) },
                firstDue: try rows.first.flatMap { row throws(OffpeakError) in
                    try row("next_attempt_at", as: Date?.self)
                })
        }
    }

    func itemPrompts(runID: String) throws(OffpeakError) -> [String: ItemPrompt] {
        var prompts: [String: ItemPrompt] = [:]
        for row in try rows(
            """
            SELECT item_id, cache_key, sources FROM requests
            WHERE run_id = \(runID) AND source = \(RequestSource.spec.rawValue)
            """)
        {
            prompts[try row("item_id")] = ItemPrompt(
                cacheKey: try row("cache_key"), sources: try row("sources"))
        }
        return prompts
    }

    func itemAnswers(runID: String) throws(OffpeakError) -> [String: String] {
        var answers: [String: String] = [:]
        for row in try rows(
            """
            SELECT q.item_id, a.text FROM requests q JOIN results a ON a.request_id = q.id
            WHERE q.run_id = \(runID) AND q.source = \(RequestSource.spec.rawValue)
            """)
        {
            answers[try row("item_id")] = try row("text")
        }
        return answers
    }

    /// Read through the partial index `requests_answered_by_job`: its conditions are written as
    /// literals here, since SQLite uses a partial index only for a query whose own terms imply them.
    func update(run: RunRecord) throws(OffpeakError) {
        try StoredDate.check(run)
        guard try execute(RunRules.update(run)) == 1 else { throw RunRules.noSuchRun(run.id) }
    }

    func answeredItems(job: String) throws(OffpeakError) -> Set<String> {
        Set(
            try rows(
                """
                SELECT DISTINCT item_id FROM requests
                WHERE job = \(job) AND source = 'spec' AND state = \(unescaped: SQLStates.request(.done))
                UNION SELECT item_id FROM answered_items WHERE job = \(job)
                """
            ).map { row throws(OffpeakError) -> String in try row("item_id") })
    }
}

extension RunStore where Self: SQLEngine {
    /// Read through the partial index `requests_answered_by_job`, as `answeredItems(job:)` is.
    func earlierAnswers(job: String, before: Date) throws(OffpeakError) -> [EarlierAnswer] {
        try rows(
            """
            SELECT requests.item_id, requests.sources, results.run_id, results.text, results.model,
                results.from_cache, results.finish_reason, results.citations
            FROM requests JOIN runs ON runs.id = requests.run_id
                JOIN results ON results.request_id = requests.id
            WHERE requests.job = \(job) AND requests.source = 'spec'
                AND requests.state = \(unescaped: SQLStates.request(.done)) AND runs.created_at < \(before)
            ORDER BY runs.created_at, requests.run_id, requests.position
            """
        ).map { row throws(OffpeakError) in
            EarlierAnswer(
                itemId: try row("item_id"), runId: try row("run_id"), text: try row("text"),
                model: try row("model"), fromCache: try row("from_cache"),
                finishReason: try row("finish_reason"), citations: try row("citations"),
                sources: try row("sources"))
        }
    }
}

/// Run reads and writes the engines' own transactions make too (a commit reads the run's counts
/// and writes its row).
enum RunRules {
    /// The statement that writes every column of the run's row (as GRDB's `update` does).
    ///
    /// The spec is written only when its hash changed: PostgreSQL compresses a new value of a long
    /// text again, at every commit, while the one it keeps costs nothing.
    /// - Parameter fromCounters: its done, failed and cached items are taken from the run's
    ///   counters (`run_items`) by the same statement, not from `run`.
    static func update(_ run: RunRecord, fromCounters: Bool = false) -> SQLStatement {
        func count(_ column: String, _ value: Int) -> SQLStatement {
            fromCounters
                ? "coalesce((SELECT \(unescaped: column) FROM run_items WHERE run_id = runs.id), 0)"
                : "\(value)"
        }
        return """
            UPDATE runs SET job = \(run.job), kind = \(run.kind), spec_hash = \(run.specHash),
                state = \(run.state.rawValue), reason = \(run.reason), budget_stop = \(run.budgetStop),
                provider = \(run.provider), model = \(run.model), tier = \(run.tier),
                downgraded = \(run.downgraded), forced = \(run.forced), items_total = \(run.itemsTotal),
                items_done = \(count("done", run.itemsDone)), items_failed = \(count("failed", run.itemsFailed)),
                items_cached = \(count("cached", run.itemsCached)),
                created_at = \(run.createdAt), started_at = \(run.startedAt),
                updated_at = \(run.updatedAt), finished_at = \(run.finishedAt),
                deadline_at = \(run.deadlineAt),
                spec = CASE WHEN spec_hash = \(run.specHash) AND (spec IS NULL) = \(run.spec == nil) THEN spec
                    ELSE \(run.spec) END,
                failure_streak = \(run.failureStreak),
                failure_text = \(run.failureText), failure_items = \(run.failureItems)
            WHERE id = \(run.id)
            """
    }

    /// Writes every column of the run's row (`update`).
    /// - Throws: a store error when there is no such run, as GRDB's `update` does.
    static func update(_ run: RunRecord, _ sql: any SQLConnection) throws(OffpeakError) {
        try StoredDate.check(run)
        guard try sql.execute(update(run)) == 1 else { throw noSuchRun(run.id) }
    }

    static func noSuchRun(_ id: String) -> OffpeakError {
        OffpeakError(.ioError, "the store has no run \(id) to update")
    }

    /// The run's counts as the `run_items` counters hold them: triggers on `requests` and `results`
    /// keep them in every transaction that changes a row, so reading them costs the same for 10
    /// items or 100,000.
    static func itemCounts(_ sql: any SQLConnection, runID: String) throws(OffpeakError) -> ItemCounts {
        guard
            let row = try sql.rows(
                "SELECT requests, total, done, failed, cached FROM run_items WHERE run_id = \(runID)"
            ).first
        else { return ItemCounts() }
        return ItemCounts(
            requests: try row("requests"), total: try row("total"), done: try row("done"),
            failed: try row("failed"), cached: try row("cached"))
    }
}

extension RequestOutline {
    /// A row holding `id, item_id, state, error, source`; a state or source offpeak does not know is
    /// an error naming the request, never a trap.
    init(row: some SQLRow) throws(OffpeakError) {
        let id: String = try row("id")
        let state: String = try row("state")
        guard let known = RequestRecord.State(rawValue: state) else {
            throw OffpeakError(.dataError, "stored request \(id) has an unknown state \"\(state)\"")
        }
        let source: String = try row("source")
        guard let from = RequestSource(rawValue: source) else {
            throw OffpeakError(.dataError, "stored request \(id) has an unknown source \"\(source)\"")
        }
        self.init(id: id, itemId: try row("item_id"), state: known, error: try row("error"), source: from)
    }
}
