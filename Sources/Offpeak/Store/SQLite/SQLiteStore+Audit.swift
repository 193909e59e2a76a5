import Foundation
import GRDB

/// The batch audit on SQLite: the audit calls' ledger rows (`ledger.audit`), the items audited
/// (`audit_items`) and one record per job, provider and model (`audit_records`, its record as
/// stored text: `AuditRecord.storedText`).
extension SQLiteStore: AuditStore {
    func auditRecord(job: String, provider: String, model: String) throws(OffpeakError) -> AuditRecord? {
        try read { db in try Self.auditRecord(job: job, provider: provider, model: model, db) }
    }

    func auditRecords(job: String?) throws(OffpeakError) -> [AuditRecord] {
        try read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT record FROM audit_records WHERE ? OR job = ?
                    ORDER BY updated_at DESC, job, provider, model
                    """, arguments: [job == nil, job ?? ""]
            ).compactMap(AuditRecord.stored)
        }
    }

    @discardableResult
    func commitAudit(_ audit: AuditCommit) throws(OffpeakError) -> AuditRecord? {
        try audit.checkDates()
        defer { if audit.cache != nil { CacheLookups.noteWrite() } }
        return try write { db in
            if let reservation = audit.reservation {
                try BudgetRules.release(reservation, SQLiteConnection(db: db))
            }
            if let slot = audit.slot {
                try db.execute(
                    sql: """
                        UPDATE batch_audits SET outcome = ? WHERE batch_id = ? AND custom_id = ?
                        AND outcome IS NULL
                        """, arguments: [slot.outcome.rawValue, slot.batchID, slot.customID])
                guard db.changesCount == 1 else { return nil }
            }
            var ledger = audit.ledger
            ledger?.audit = true
            try ledger?.insert(db)
            if let queued = audit.queued {
                try db.execute(sql: "DELETE FROM audit_queue WHERE request_id = ?", arguments: [queued])
                // Booked by another process: paid for (the ledger row above), not counted twice.
                guard db.changesCount == 1 else { return nil }
            }
            if var row = audit.row {
                row.ledgerID = ledger?.id
                try Self.insertAuditRow(row, db)
            }
            if let replacement = audit.replacement {
                try Self.replaceAnswer(replacement, ledgerID: ledger?.id, db)
            }
            if let cache = audit.cache { _ = try Self.save(cache, db) }
            return try audit.change.map { change throws in try Self.updateAuditRecord(change, db) }
        }
    }

    @discardableResult
    func reopen(runID: String, requests: [(id: String, cacheKey: String)], reason: String, now: Date)
        throws(OffpeakError) -> Int
    {
        guard !requests.isEmpty else { return 0 }
        defer { CacheLookups.noteWrite() }
        return try write { db in
            var moved = 0
            for (id, cacheKey) in requests {
                try db.execute(
                    sql: """
                        UPDATE requests SET state = \(SQLStates.request(.pending)), error = ?, updated_at = ?
                        WHERE id = ? AND run_id = ? AND state = \(SQLStates.request(.done))
                        """, arguments: [reason, now, id, runID])
                guard db.changesCount > 0 else { continue }
                moved += 1
                try db.execute(sql: "DELETE FROM results WHERE request_id = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM audit_queue WHERE request_id = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM cache_entries WHERE key = ?", arguments: [cacheKey])
            }
            guard moved > 0, let run = try RunRecord.fetchOne(db, key: runID) else { return moved }
            // The checkpoint keeps its segment and last request: reopening ends no segment.
            let checkpoint = try CheckpointRecord.fetchOne(db, key: runID)
            try Self.saveProgress(
                db, run: run, segment: checkpoint?.segment ?? 0, lastRequestID: checkpoint?.lastRequestId,
                wholeRun: false)
            return moved
        }
    }

    func auditRows(job: String) throws(OffpeakError) -> [AuditRow] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT id, \(AuditRow.columns) FROM audit_items WHERE job = ? ORDER BY at, id",
                arguments: [job]
            ).map { row in
                AuditRow(
                    id: row["id"], at: row["at"], job: row["job"], runID: row["run_id"],
                    requestID: row["request_id"], itemID: row["item_id"], provider: row["provider"],
                    model: row["model"], batchSize: row["batch_size"], position: row["position"],
                    agreed: row["agreed"], similarity: row["similarity"],
                    batchedAnswer: row["batched_answer"],
                    singleAnswer: row["single_answer"], keptSingle: row["kept_single"],
                    ledgerID: row["ledger_id"], host: row["host"])
            }
        }
    }

    /// Summed in the order of `id` (the order of every index holding the rows: `ledger_audits`,
    /// the job's, the run's), as PostgreSQL sums them.
    func uncheckedAnswers(runID: String, model: String, largerThan: Int) throws(OffpeakError)
        -> [(id: String, cacheKey: String)]
    {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT q.id, q.cache_key FROM results r
                    JOIN requests q ON q.id = r.request_id
                    JOIN ledger l ON l.id = r.ledger_id
                    WHERE r.run_id = ? AND NOT r.from_cache AND q.state = \(SQLStates.request(.done))
                    AND l.model = ? AND l.items > ? AND NOT l.audit
                    AND NOT EXISTS (SELECT 1 FROM audit_items a WHERE a.request_id = q.id)
                    ORDER BY q.position
                    """, arguments: [runID, model, largerThan]
            ).map { ($0["id"], $0["cache_key"]) }
        }
    }

    func queuedAudits(runID: String) throws(OffpeakError) -> [(
        audit: QueuedAudit, request: RequestRecord, answer: String
    )] {
        try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT a.request_id, a.batch_size, a.position, a.probe, r.text FROM audit_queue a
                    JOIN results r ON r.request_id = a.request_id
                    WHERE a.run_id = ?
                    """, arguments: [runID])
            let requests = try StoredPayload.expand(
                RequestRecord.filter(keys: rows.map { $0["request_id"] as String }).fetchAll(db), db)
            let byID = Dictionary(requests.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            return rows.compactMap { row -> (QueuedAudit, RequestRecord, String)? in
                let id: String = row["request_id"]
                guard let request = byID[id] else { return nil }
                return (
                    QueuedAudit(
                        requestID: id, size: row["batch_size"], position: row["position"], probe: row["probe"]
                    ),
                    request, row["text"]
                )
            }.sorted { ($0.1.position, $0.1.itemId) < ($1.1.position, $1.1.itemId) }
        }
    }

    /// Queues `audit` of a call of the run, in the transaction of `db`.
    static func queue(_ audit: QueuedAudit, runID: String, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO audit_queue (request_id, run_id, batch_size, position, probe) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(request_id) DO UPDATE SET
                    batch_size = excluded.batch_size, position = excluded.position, probe = excluded.probe
                """, arguments: [audit.requestID, runID, audit.size, audit.position, audit.probe])
    }

    func replacedAnswers(job: String, runID: String) throws(OffpeakError) -> Int {
        try read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM audit_items WHERE job = ? AND run_id = ? AND kept_single",
                arguments: [job, runID]) ?? 0
        }
    }

    func auditSpend(job: String?, runID: String?) throws(OffpeakError) -> Spend {
        try read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT \(SQLiteStore.spendColumns) FROM ledger
                    WHERE audit AND (? OR job = ?) AND (? OR run_id = ?)
                    """,
                arguments: [job == nil, job ?? "", runID == nil, runID ?? ""])
            return try row.map(SQLiteStore.spend) ?? Spend()
        }
    }

    private static func insertAuditRow(_ row: AuditRow, _ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO audit_items (\(AuditRow.columns)) VALUES (\(databaseQuestionMarks(count: 16)))",
            arguments: [
                row.at, row.job, row.runID, row.requestID, row.itemID, row.provider, row.model, row.batchSize,
                row.position, row.agreed, row.similarity, row.batchedAnswer, row.singleAnswer, row.keptSingle,
                row.ledgerID, row.host,
            ])
    }

    /// Puts `replacement` in place of its request's answer, paid for by the audit call's ledger
    /// row; the request stays done, and its cached count with it (`from_cache` is left).
    private static func replaceAnswer(_ replacement: ResultRecord, ledgerID: Int64?, _ db: Database) throws {
        try db.execute(
            sql: """
                UPDATE results SET text = ?, finish_reason = ?, model = ?, input_tokens = ?, output_tokens = ?,
                    dollars = ?, ledger_id = ?, created_at = ?, citations = ?
                WHERE request_id = ?
                """,
            arguments: [
                replacement.text, replacement.finishReason, replacement.model, replacement.inputTokens,
                replacement.outputTokens, replacement.dollars, ledgerID, replacement.createdAt,
                replacement.citations, replacement.requestId,
            ])
    }

    /// Reads, changes and writes an audit record in the transaction of `db`.
    private static func updateAuditRecord(_ change: AuditChange, _ db: Database) throws -> AuditRecord {
        var record =
            try auditRecord(job: change.job, provider: change.provider, model: change.model, db)
            ?? AuditRecord(job: change.job, provider: change.provider, model: change.model, at: change.at)
        change.change(&record)
        try db.execute(
            sql: """
                INSERT INTO audit_records (job, provider, model, record, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(job, provider, model) DO UPDATE SET
                    record = excluded.record, updated_at = excluded.updated_at
                """,
            arguments: [change.job, change.provider, change.model, try record.storedText(), change.at])
        return record
    }

    private static func auditRecord(job: String, provider: String, model: String, _ db: Database) throws
        -> AuditRecord?
    {
        try String.fetchOne(
            db, sql: "SELECT record FROM audit_records WHERE job = ? AND provider = ? AND model = ?",
            arguments: [job, provider, model]
        ).flatMap(AuditRecord.stored)
    }
}
