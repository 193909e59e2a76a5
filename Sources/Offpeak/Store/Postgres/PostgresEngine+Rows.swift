import Foundation
import PostgresNIO

/// Rows to records and back, without GRDB: each record's columns named once, in the order its
/// statements list them, and a decoder reading them by name.
extension PostgresEngine {
    static let requestColumns = RequestRecord.columns

    static let resultColumns = """
        request_id, run_id, text, finish_reason, model, from_cache, ledger_id, input_tokens, output_tokens,
        dollars, created_at, citations
        """

    /// A request as its row holds it: its payload may name a shared text (`expand` makes it whole).
    func storedRequest(_ row: PostgresRow) throws(OffpeakError) -> RequestRecord {
        let column = PostgresColumns(row, store)
        var record = RequestRecord(
            id: try column("id"), runId: try column("run_id"), job: try column("job"),
            itemId: try column("item_id"), position: try column("position"),
            source: try column.value("source", as: RequestSource.self), clientId: try column("client_id"),
            tier: try column("tier"), payload: try column("payload"), cacheKey: try column("cache_key"),
            state: try column.value("state", as: RequestRecord.State.self), attempts: try column("attempts"),
            nextAttemptAt: try column("next_attempt_at"), error: try column("error"),
            createdAt: try column("created_at"), updatedAt: try column("updated_at"),
            cachePolicy: try column.value("cache_policy", as: RequestRecord.CachePolicy.self),
            sources: try column("sources"))
        record.tags = try column("tags")
        return record
    }

    /// Requests with whole payloads, from the rows of a query listing `requestColumns`.
    func requests(_ rows: [PostgresRow]) throws(OffpeakError) -> [RequestRecord] {
        var records: [RequestRecord] = []
        records.reserveCapacity(rows.count)
        for row in rows { records.append(try storedRequest(row)) }
        return try expand(records)
    }

    func result(_ row: PostgresRow) throws(OffpeakError) -> ResultRecord {
        let column = PostgresColumns(row, store)
        return ResultRecord(
            requestId: try column("request_id"), runId: try column("run_id"), text: try column("text"),
            finishReason: try column("finish_reason"), model: try column("model"),
            fromCache: try column("from_cache"), ledgerId: try column("ledger_id"),
            inputTokens: try column("input_tokens"), outputTokens: try column("output_tokens"),
            dollars: try column("dollars"), createdAt: try column("created_at"),
            citations: try column("citations"))
    }

    /// Inserts the run's row.
    func insertRow(_ run: RunRecord) throws(OffpeakError) {
        try StoredDate.check(run)
        try store.query(
            """
            INSERT INTO runs (\(unescaped: RunRules.runColumns)) VALUES (\(run.id), \(run.job), \(run.kind),
                \(run.specHash), \(run.state.rawValue), \(run.reason), \(run.budgetStop), \(run.provider),
                \(run.model), \(run.tier), \(run.downgraded), \(run.forced), \(run.itemsTotal), \(run.itemsDone),
                \(run.itemsFailed), \(run.itemsCached), \(run.createdAt), \(run.startedAt), \(run.updatedAt),
                \(run.finishedAt), \(run.deadlineAt), \(run.spec), \(run.failureStreak), \(run.failureText),
                \(run.failureItems))
            """)
    }

    /// Writes every column of the run's row (as GRDB's `update` does).
    /// - Parameter countsFromCounters: its done, failed and cached items are taken from the run's
    ///   counters (`run_items`) in the same statement, not from `run`.
    /// - Returns: the counts written.
    /// - Throws: a store error when there is no such run, as GRDB's `update` does.
    @discardableResult
    func updateRow(_ run: RunRecord, countsFromCounters: Bool = false) throws(OffpeakError)
        -> (done: Int, failed: Int, cached: Int)
    {
        let updated = try store.query(updateStatement(run, countsFromCounters: countsFromCounters))
        if let row = updated.first { return try store.decode(row, as: (Int, Int, Int).self) }
        throw OffpeakError(
            .ioError, "PostgreSQL at \(store.url.endpoint) has no run \(run.id) to update")
    }

    /// `updateRow`'s statement (`RunRules.update`), which answers the counts written (no row: no
    /// such run).
    func updateStatement(_ run: RunRecord, countsFromCounters: Bool) throws(OffpeakError) -> PostgresQuery {
        try StoredDate.check(run)
        return PostgresSQLConnection.query(
            "\(RunRules.update(run, fromCounters: countsFromCounters)) RETURNING items_done, items_failed, items_cached"
        )
    }
}
