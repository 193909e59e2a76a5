import Foundation

/// Runs read by their rows, decided once for both engines (`SQLEngine`): each row decoded on its
/// own, so one that does not decode is named apart (`UnreadableRun`) and the others are read; a
/// read of one run (its id, its job's newest) throws for it instead.
extension RunStore where Self: SQLEngine {
    func run(id: String) throws(OffpeakError) -> RunRecord? {
        try alone { sql throws(OffpeakError) in try RunRules.single(sql, "id = \(id)") }
    }

    func readableRun(id: String) throws(OffpeakError) -> RunRecord? {
        try alone { sql throws(OffpeakError) in try RunRules.runRows(sql, where: "id = \(id)").runs.first }
    }

    func runs(limit: Int) throws(OffpeakError) -> [RunRecord] {
        try runRows(limit: limit).runs
    }

    func runRows(limit: Int) throws(OffpeakError) -> RunRows {
        try alone { sql throws(OffpeakError) in
            try RunRules.runRows(sql, orderedBy: "created_at DESC LIMIT \(max(0, limit))")
        }
    }

    func resumableRuns() throws(OffpeakError) -> [RunRecord] {
        try resumableRunRows().runs
    }

    func resumableRunRows() throws(OffpeakError) -> RunRows {
        try alone { sql throws(OffpeakError) in
            try RunRules.runRows(
                sql, where: "state IN \(unescaped: RunRules.openStates)", orderedBy: "created_at")
        }
    }

    func latestResumableRun(job: String) throws(OffpeakError) -> RunRecord? {
        try alone { sql throws(OffpeakError) in try RunRules.resumableRun(sql, job: job) }
    }

    func latestFinishedRun(job: String, createdBefore: Date?) throws(OffpeakError) -> RunRecord? {
        let before: SQLStatement = createdBefore.map { "AND created_at < \($0)" } ?? ""
        return try alone { sql throws(OffpeakError) in
            try RunRules.single(
                sql, "job = \(job) AND state IN \(unescaped: RunRules.finishedStates) \(before)",
                orderedBy: "created_at DESC LIMIT 1")
        }
    }
}

extension RunRules {
    /// The columns of a run, as `RunRecord(row:)` reads them.
    static let runColumns = """
        id, job, kind, spec_hash, state, reason, budget_stop, provider, model, tier, downgraded, forced,
        items_total, items_done, items_failed, items_cached, created_at, started_at, updated_at, finished_at,
        deadline_at, spec, failure_streak, failure_text, failure_items
        """

    /// The states of runs not finished, and of those finished, as SQL lists (literals, as `SQLStates`).
    static let openStates = states([.idle, .running, .waiting, .interrupted])
    static let finishedStates = states(RunState.allCases.filter { !$0.isResumable })

    private static func states(_ states: [RunState]) -> String {
        "(" + states.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ")"
    }

    /// The job's newest unfinished run (`openRun`'s, in the engines' own transactions too).
    static func resumableRun(_ sql: any SQLConnection, job: String) throws(OffpeakError) -> RunRecord? {
        try single(
            sql, "job = \(job) AND state IN \(unescaped: openStates)", orderedBy: "created_at DESC LIMIT 1")
    }

    /// The first run `condition` selects; an error (74) when its row cannot be read.
    static func single(
        _ sql: any SQLConnection, _ condition: SQLStatement, orderedBy order: SQLStatement = ""
    )
        throws(OffpeakError) -> RunRecord?
    {
        let found = try runRows(sql, where: condition, orderedBy: order)
        if let unreadable = found.unreadable.first { throw unreadable.error }
        return found.runs.first
    }

    /// The runs `condition` selects, in `order`, those whose row does not decode named apart.
    static func runRows(
        _ sql: any SQLConnection, where condition: SQLStatement = "", orderedBy order: SQLStatement = ""
    )
        throws(OffpeakError) -> RunRows
    {
        let filter: SQLStatement = condition.isEmpty ? "" : "WHERE \(condition)"
        let sorted: SQLStatement = order.isEmpty ? "" : "ORDER BY \(order)"
        var rows = RunRows()
        for row in try sql.rows("SELECT \(unescaped: runColumns) FROM runs \(filter) \(sorted)") {
            do { rows.runs.append(try RunRecord(row: row)) } catch {
                rows.unreadable.append(UnreadableRun(row: row, error: error))
            }
        }
        return rows
    }
}

extension RunRecord {
    /// A row holding `RunRules.runColumns`.
    init(row: some SQLRow) throws(OffpeakError) {
        self.init(
            id: try row("id"), job: try row("job"), kind: try row("kind"), specHash: try row("spec_hash"),
            state: try row.value("state", as: RunState.self), reason: try row("reason"),
            budgetStop: try row("budget_stop"), provider: try row("provider"), model: try row("model"),
            tier: try row("tier"), downgraded: try row("downgraded"), forced: try row("forced"),
            itemsTotal: try row("items_total"), itemsDone: try row("items_done"),
            itemsFailed: try row("items_failed"), itemsCached: try row("items_cached"),
            createdAt: try row("created_at"), startedAt: try row("started_at"),
            updatedAt: try row("updated_at"),
            finishedAt: try row("finished_at"), deadlineAt: try row("deadline_at"), spec: try row("spec"),
            failureStreak: try row("failure_streak"), failureText: try row("failure_text"),
            failureItems: try row("failure_items"))
    }
}
