import Foundation
import PostgresNIO

/// The rows a call's commit writes on PostgreSQL (`PostgresEngine.commit`): its ledger row with its
/// model's latency, and its answers with their requests' state, each in one statement.
extension PostgresEngine {
    /// Writes ledger rows in order, in one statement.
    ///
    /// The rows are inserted in the order of `entries` (`ORDER BY ordinal`), and an identity column
    /// hands out ever larger ids, so the ids `RETURNING` gives, sorted, are the rows' in that order
    /// (whatever order it lists them in, and whatever ids other sessions take meanwhile).
    /// - Parameter latency: the call's measure, folded into its model's means
    ///   (`SQLiteStore.record`) by the same statement.
    /// - Returns: the rows' ids, in the order of `entries`.
    func insertLedger(_ entries: [LedgerEntry], latency: LatencySample?) throws(OffpeakError) -> [Int64?] {
        guard !entries.isEmpty else { return [] }
        let rows = try store.query(try ledgerStatement(entries, latency: latency))
        var ids: [Int64] = []
        for row in rows { ids.append(try store.decode(row, as: Int64.self)) }
        return ids.sorted().map { Optional($0) }
    }

    /// `insertLedger`'s statement: the rows in order, their ids returned, the latency folded in.
    func ledgerStatement(_ entries: [LedgerEntry], latency: LatencySample?) throws(OffpeakError)
        -> PostgresQuery
    {
        for entry in entries { try StoredDate.check(entry) }
        let column = { (values: (LedgerEntry) -> Int) in entries.map(values) }
        let (model, milliseconds, outputTokens) =
            (latency?.model ?? "", latency?.milliseconds ?? 0, latency?.outputTokens ?? 0)
        let perToken = milliseconds / max(1, latency?.weightedTokens ?? 0)
        let alpha = LatencyEstimate.smoothing
        return """
            WITH measured AS (
                INSERT INTO model_latency AS m (model, ms_per_call, ms_per_output_token, output_tokens, samples,
                    updated_at)
                SELECT \(model), \(milliseconds), \(perToken), \(outputTokens), 1, \(Date())
                WHERE \(latency != nil)
                ON CONFLICT (model) DO UPDATE SET
                    ms_per_call = m.ms_per_call * (1 - \(alpha)) + excluded.ms_per_call * \(alpha),
                    ms_per_output_token =
                        m.ms_per_output_token * (1 - \(alpha)) + excluded.ms_per_output_token * \(alpha),
                    output_tokens = m.output_tokens * (1 - \(alpha)) + excluded.output_tokens * \(alpha),
                    samples = m.samples + 1, updated_at = excluded.updated_at)
            INSERT INTO ledger (at, job, run_id, provider, model, tier, downgraded, items, input_tokens,
                output_tokens, cache_read_tokens, cache_write_tokens, dollars, naive_dollars, batch_api,
                cache_hit, usage_estimated, latency_ms, failed, unpriced, host, search_requests, audit, flex,
                price_window, waiting_saved, tags)
            SELECT at, job, CASE WHEN has_run THEN run_id END, provider, model, tier, downgraded, items,
                input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, dollars, naive_dollars,
                batch_api, cache_hit, usage_estimated, latency_ms, failed, unpriced, host, search_requests, audit,
                flex, price_window, waiting_saved, tags
            FROM unnest(\(entries.map(\.at))::timestamptz[], \(entries.map(\.job))::text[],
                \(entries.map { $0.runId ?? "" })::text[], \(entries.map { $0.runId != nil })::boolean[],
                \(entries.map(\.provider))::text[], \(entries.map(\.model))::text[], \(entries.map(\.tier))::text[],
                \(entries.map(\.downgraded))::boolean[], \(column { $0.items })::bigint[],
                \(column { $0.inputTokens })::bigint[], \(column { $0.outputTokens })::bigint[],
                \(column { $0.cacheReadTokens })::bigint[], \(column { $0.cacheWriteTokens })::bigint[],
                \(entries.map(\.dollars))::float8[], \(entries.map(\.naiveDollars))::float8[],
                \(entries.map(\.batchApi))::boolean[], \(entries.map(\.cacheHit))::boolean[],
                \(entries.map(\.usageEstimated))::boolean[], \(column { $0.latencyMs })::bigint[],
                \(entries.map(\.failed))::boolean[], \(entries.map(\.unpriced))::boolean[],
                \(entries.map(\.host))::text[], \(column { $0.searchRequests })::bigint[],
                \(entries.map(\.audit))::boolean[], \(entries.map(\.flex))::boolean[],
                \(entries.map(\.priceWindow))::text[], \(entries.map(\.waitingSaved))::float8[],
                \(entries.map(\.tags))::text[])
                WITH ORDINALITY AS t(at, job, run_id, has_run, provider, model, tier, downgraded, items,
                    input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, dollars, naive_dollars,
                    batch_api, cache_hit, usage_estimated, latency_ms, failed, unpriced, host, search_requests,
                    audit, flex, price_window, waiting_saved, tags, ordinal)
            ORDER BY ordinal
            RETURNING id
            """
    }

    /// The ledger rows that paid for answers (`insertAnswers`).
    enum AnswersLedger {
        /// The row this session inserted last, in this transaction: all the answers' call.
        case justInserted
        /// Each answer's row, or none.
        case ids([Int64?])
    }

    /// Stores answers, each tied to the ledger row that paid for it, and marks their requests done.
    /// An answer to a request that has one already fails the statement (`results`' key): no answer
    /// is stored twice.
    func insertAnswers(_ results: [ResultRecord], ledger: AnswersLedger, at times: [Date])
        throws(OffpeakError)
    {
        guard !results.isEmpty else { return }
        let (justInserted, ledgerIDs) =
            switch ledger {
            case .justInserted: (true, results.map { _ in Int64?.none })
            case .ids(let ids): (false, ids)
            }
        for result in results { try StoredDate.check(result) }
        try store.send(
            """
            WITH answered AS (
            INSERT INTO results (\(unescaped: Self.resultColumns))
            SELECT request_id, run_id, text, finish_reason, model, from_cache,
                CASE WHEN \(justInserted) THEN currval(pg_get_serial_sequence('ledger', 'id'))
                    WHEN has_ledger THEN ledger_id END, input_tokens, output_tokens, dollars, created_at,
                CASE WHEN has_citations THEN cited END
            FROM unnest(\(results.map(\.requestId))::text[], \(results.map(\.runId))::text[],
                \(results.map(\.text))::text[], \(results.map(\.finishReason))::text[],
                \(results.map(\.model))::text[], \(results.map(\.fromCache))::boolean[],
                \(ledgerIDs.map { $0 ?? 0 })::bigint[], \(ledgerIDs.map { $0 != nil })::boolean[],
                \(results.map(\.inputTokens))::bigint[], \(results.map(\.outputTokens))::bigint[],
                \(results.map(\.dollars))::float8[], \(results.map(\.createdAt))::timestamptz[],
                \(results.map { $0.citations ?? "" })::text[], \(results.map { $0.citations != nil })::boolean[])
                AS t(request_id, run_id, text, finish_reason, model, from_cache, ledger_id, has_ledger,
                    input_tokens, output_tokens, dollars, created_at, cited, has_citations))
            UPDATE requests r SET state = \(RequestRecord.State.done.rawValue), error = NULL, updated_at = u.at
            FROM unnest(\(results.map(\.requestId))::text[], \(times)::timestamptz[]) AS u(id, at)
            WHERE r.id = u.id
            """)
    }
}
