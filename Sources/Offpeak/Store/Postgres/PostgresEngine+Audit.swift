import Foundation
import PostgresNIO

/// The batch audit on PostgreSQL, as the SQLite engine keeps it (`SQLiteStore+Audit`): the audit calls'
/// ledger rows, the items audited and one record per job, provider and model, its record as stored
/// text (`AuditRecord.storedText`).
///
/// A record is read, changed and written under a transaction advisory lock on its job, provider and
/// model (`lockAuditRecord`), so two processes auditing one job take turns even before it has a
/// row. A commit that replaces an answer, and a reopening, lock the run's row first, as a call's
/// commit does; the cache's lock comes last, as in every commit.
extension PostgresEngine: AuditStore {
    func auditRecord(job: String, provider: String, model: String) throws(OffpeakError) -> AuditRecord? {
        guard
            let row = try store.query(
                """
                SELECT record FROM audit_records
                WHERE job = \(job) AND provider = \(provider) AND model = \(model)
                """
            ).first
        else { return nil }
        return AuditRecord.stored(try store.decode(row, as: String.self))
    }

    func auditRecords(job: String?) throws(OffpeakError) -> [AuditRecord] {
        var records: [AuditRecord] = []
        for row in try store.query(
            """
            SELECT record FROM audit_records WHERE \(job == nil) OR job = \(job ?? "")
            ORDER BY updated_at DESC, job COLLATE "C", provider COLLATE "C", model COLLATE "C"
            """)
        {
            if let record = AuditRecord.stored(try store.decode(row, as: String.self)) {
                records.append(record)
            }
        }
        return records
    }

    @discardableResult
    func commitAudit(_ audit: AuditCommit) throws(OffpeakError) -> AuditRecord? {
        try audit.checkDates()
        return try store.transaction { () throws(OffpeakError) -> AuditRecord? in
            if let replacement = audit.replacement { try lockRun(replacement.runId) }
            if let reservation = audit.reservation {
                try BudgetRules.release(reservation, PostgresSQLConnection(engine: self))
            }
            if let slot = audit.slot, try !claimAudit(slot) { return nil }
            var ledger = audit.ledger
            ledger?.audit = true
            let ledgerID = try insertLedger(ledger.map { [$0] } ?? [], latency: nil).first ?? nil
            if let queued = audit.queued,
                try store.query("DELETE FROM audit_queue WHERE request_id = \(queued) RETURNING request_id")
                    .isEmpty
            {
                return nil  // booked by another process: paid, not counted twice
            }
            if var row = audit.row {
                row.ledgerID = ledgerID
                try insertAuditRow(row)
            }
            if let replacement = audit.replacement { try replaceAnswer(replacement, ledgerID: ledgerID) }
            let record = try audit.change.map { change throws(OffpeakError) in try updateAuditRecord(change) }
            // The cache's lock last: commits of other runs wait for it until this one ends.
            if let cache = audit.cache { _ = try save(cache) }
            return record
        }
    }

    @discardableResult
    func reopen(runID: String, requests: [(id: String, cacheKey: String)], reason: String, now: Date)
        throws(OffpeakError) -> Int
    {
        guard !requests.isEmpty else { return 0 }
        return try store.transaction { () throws(OffpeakError) -> Int in
            guard try lockRun(runID), let run = try self.run(id: runID) else { return 0 }
            let rows = try store.query(
                """
                UPDATE requests r SET state = \(RequestRecord.State.pending.rawValue), error = \(reason),
                    updated_at = \(now)
                FROM unnest(\(requests.map(\.id))::text[], \(requests.map(\.cacheKey))::text[]) AS u(id, cache_key)
                WHERE r.id = u.id AND r.run_id = \(runID) AND r.state = \(RequestRecord.State.done.rawValue)
                RETURNING r.id, u.cache_key
                """)
            guard !rows.isEmpty else { return 0 }
            var (ids, keys) = ([String](), [String]())
            for row in rows {
                let (id, key) = try store.decode(row, as: (String, String).self)
                ids.append(id)
                keys.append(key)
            }
            try store.send("DELETE FROM results WHERE request_id = ANY(\(ids)::text[])")
            try store.send("DELETE FROM audit_queue WHERE request_id = ANY(\(ids)::text[])")
            try lockCache()
            try store.send("DELETE FROM cache_entries WHERE key = ANY(\(keys)::text[])")
            // The checkpoint keeps its segment and last request: reopening ends no segment.
            let checkpoint = try checkpoint(runID: runID)
            _ = try saveProgress(
                run, segment: checkpoint?.segment ?? 0, lastRequestID: checkpoint?.lastRequestId,
                wholeRun: false
            ).read()
            return ids.count
        }
    }

    func auditRows(job: String) throws(OffpeakError) -> [AuditRow] {
        var rows: [AuditRow] = []
        for row in try store.query(
            """
            SELECT id, \(unescaped: AuditRow.columns) FROM audit_items WHERE job = \(job) ORDER BY at, id
            """)
        {
            let column = PostgresColumns(row, store)
            rows.append(
                AuditRow(
                    id: try column("id"), at: try column("at"), job: try column("job"),
                    runID: try column("run_id"), requestID: try column("request_id"),
                    itemID: try column("item_id"), provider: try column("provider"),
                    model: try column("model"),
                    batchSize: try column("batch_size"), position: try column("position"),
                    agreed: try column("agreed"), similarity: try column("similarity"),
                    batchedAnswer: try column("batched_answer"), singleAnswer: try column("single_answer"),
                    keptSingle: try column("kept_single"), ledgerID: try column("ledger_id"),
                    host: try column("host")))
        }
        return rows
    }

    /// Summed in the order of `id`, as SQLite's indexes give the rows.
    func uncheckedAnswers(runID: String, model: String, largerThan: Int) throws(OffpeakError)
        -> [(id: String, cacheKey: String)]
    {
        var answers: [(id: String, cacheKey: String)] = []
        for row in try store.query(
            """
            SELECT q.id, q.cache_key FROM results r
            JOIN requests q ON q.id = r.request_id
            JOIN ledger l ON l.id = r.ledger_id
            WHERE r.run_id = \(runID) AND NOT r.from_cache
                AND q.state = \(RequestRecord.State.done.rawValue)
                AND l.model = \(model) AND l.items > \(largerThan) AND NOT l.audit
                AND NOT EXISTS (SELECT 1 FROM audit_items a WHERE a.request_id = q.id)
            ORDER BY q.position
            """)
        {
            let column = PostgresColumns(row, store)
            answers.append((try column("id"), try column("cache_key")))
        }
        return answers
    }

    func queuedAudits(runID: String) throws(OffpeakError) -> [(
        audit: QueuedAudit, request: RequestRecord, answer: String
    )] {
        let rows = try store.query(
            """
            SELECT a.batch_size AS audit_batch_size, a.position AS audit_position, a.probe AS audit_probe,
                t.text AS audit_answer, \(unescaped: Self.qualified(Self.requestColumns, by: "r"))
            FROM audit_queue a JOIN requests r ON r.id = a.request_id JOIN results t ON t.request_id = a.request_id
            WHERE a.run_id = \(runID)
            ORDER BY r.position, r.item_id COLLATE "C"
            """)
        var audits: [(QueuedAudit, String)] = []
        for row in rows {
            let column = PostgresColumns(row, store)
            audits.append(
                (
                    QueuedAudit(
                        requestID: try column("id"), size: try column("audit_batch_size"),
                        position: try column("audit_position"), probe: try column("audit_probe")),
                    try column("audit_answer")
                ))
        }
        return zip(audits, try requests(rows)).map { ($0.0, $1, $0.1) }
    }

    /// Queues a call's audits (`CallCommit.audits`) in the transaction open on the connection.
    func sendQueue(_ audits: [QueuedAudit], runID: String) throws(OffpeakError) {
        guard !audits.isEmpty else { return }
        try store.send(
            """
            INSERT INTO audit_queue (request_id, run_id, batch_size, position, probe)
            SELECT u.id, \(runID), u.size, u.position, u.probe
            FROM unnest(\(audits.map(\.requestID))::text[], \(audits.map { Int64($0.size) })::bigint[],
                \(audits.map { Int64($0.position) })::bigint[], \(audits.map(\.probe))::boolean[])
                AS u(id, size, position, probe)
            ON CONFLICT (request_id) DO UPDATE SET
                batch_size = excluded.batch_size, position = excluded.position, probe = excluded.probe
            """)
    }

    func replacedAnswers(job: String, runID: String) throws(OffpeakError) -> Int {
        try store.query(
            "SELECT count(*) FROM audit_items WHERE job = \(job) AND run_id = \(runID) AND kept_single"
        ).first.map { row throws(OffpeakError) in try store.decode(row, as: Int.self) } ?? 0
    }

    func auditSpend(job: String?, runID: String?) throws(OffpeakError) -> Spend {
        try spendRow(
            """
            SELECT \(unescaped: Self.spendColumns()) FROM ledger
            WHERE audit AND (\(job == nil) OR job = \(job ?? "")) AND (\(runID == nil) OR run_id = \(runID ?? ""))
            """)
    }

    private func insertAuditRow(_ row: AuditRow) throws(OffpeakError) {
        try store.send(
            """
            INSERT INTO audit_items (\(unescaped: AuditRow.columns)) VALUES (\(row.at), \(row.job), \(row.runID),
                \(row.requestID), \(row.itemID), \(row.provider), \(row.model), \(row.batchSize), \(row.position),
                \(row.agreed), \(row.similarity), \(row.batchedAnswer), \(row.singleAnswer), \(row.keptSingle),
                \(row.ledgerID), \(row.host))
            """)
    }

    /// Puts `replacement` in place of its request's answer, paid for by the audit call's ledger
    /// row; the request stays done, and its cached count with it (`from_cache` is left).
    private func replaceAnswer(_ replacement: ResultRecord, ledgerID: Int64?) throws(OffpeakError) {
        try store.send(
            """
            UPDATE results SET text = \(replacement.text), finish_reason = \(replacement.finishReason),
                model = \(replacement.model), input_tokens = \(replacement.inputTokens),
                output_tokens = \(replacement.outputTokens), dollars = \(replacement.dollars),
                ledger_id = \(ledgerID), created_at = \(replacement.createdAt), citations = \(replacement.citations)
            WHERE request_id = \(replacement.requestId)
            """)
    }

    /// Reads, changes and writes an audit record in the transaction open on the connection.
    private func updateAuditRecord(_ change: AuditChange) throws(OffpeakError) -> AuditRecord {
        let (job, provider, model) = (change.job, change.provider, change.model)
        try lockAuditRecord(job: job, provider: provider, model: model)
        var record =
            try auditRecord(job: job, provider: provider, model: model)
            ?? AuditRecord(job: job, provider: provider, model: model, at: change.at)
        change.change(&record)
        try store.send(
            """
            INSERT INTO audit_records (job, provider, model, record, updated_at)
            VALUES (\(job), \(provider), \(model), \(try record.storedText()), \(change.at))
            ON CONFLICT (job, provider, model) DO UPDATE SET
                record = excluded.record, updated_at = excluded.updated_at
            """)
        return record
    }

    /// Takes the record's transaction advisory lock: two processes changing one record take turns,
    /// even for a record not written yet (no row to lock).
    private func lockAuditRecord(job: String, provider: String, model: String) throws(OffpeakError) {
        try store.send(
            """
            SELECT pg_advisory_xact_lock(hashtextextended(\("offpeak audit \(job)\n\(provider)\n\(model)"), 0))
            """)
    }
}
