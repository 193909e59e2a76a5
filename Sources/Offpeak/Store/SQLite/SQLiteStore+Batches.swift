import Foundation
import GRDB

/// The batch lane's bookkeeping. Each write is one transaction, so a process killed at any moment
/// leaves the batch and its requests in a state the next tick can reconcile: nothing lost, nothing
/// booked twice.
extension SQLiteStore {
    func prepareBatch(
        runID: String, provider: String, model: String, calls: [[String]], audits: [BatchAuditSlot],
        worstDollars: Double, worstTokens: (input: Int, output: Int), host: String, now: Date
    ) throws(OffpeakError) -> BatchRecord {
        try write { db in
            var batch = BatchRecord.prepared(
                runID: runID, provider: provider, model: model, calls: calls, worstDollars: worstDollars,
                audits: audits.count, worstTokens: worstTokens, host: host, now: now)
            try batch.insert(db)
            for (index, requestIDs) in calls.enumerated() {
                for (slot, requestID) in requestIDs.enumerated() {
                    try db.execute(
                        sql: """
                            UPDATE requests SET state = \(SQLStates.request(.inBatch)),
                            next_attempt_at = NULL, updated_at = ?
                            WHERE id = ? AND run_id = ? AND state IN \(SQLStates.plannable)
                            """,
                        arguments: [now, requestID, runID])
                    guard db.changesCount == 1 else {
                        throw OffpeakError(
                            .software,
                            "request \(requestID) of run \(runID) is not pending; it cannot join a batch")
                    }
                    var item = BatchItemRecord(
                        batchId: batch.id, requestId: requestID, customId: "\(batch.id)_\(index)", slot: slot,
                        outcome: nil)
                    try item.insert(db)
                }
            }
            for (index, slot) in audits.enumerated() {
                var audit = BatchAuditRecord(
                    batchId: batch.id, customId: BatchRecord.auditCustomID(batchID: batch.id, index: index),
                    requestId: slot.requestID, batchSize: slot.size, position: slot.position)
                try audit.insert(db)
            }
            return batch
        }
    }

    func recordSubmitted(batchID: String, remoteID: String, now: Date, nextPoll: Date) throws(OffpeakError) {
        try write { db in
            let batch = try SQLiteStore.batch(batchID, db)
            if let known = batch.remoteId {
                guard known == remoteID else {
                    throw OffpeakError(
                        .software, "batch \(batchID) already has provider id \(known), not \(remoteID)")
                }
                return
            }
            try db.execute(
                sql: """
                    UPDATE provider_batches SET remote_id = ?, state = \(SQLStates.batch(.submitted)),
                    submitted_at = ?,
                    next_poll_at = ? WHERE id = ?
                    """,
                arguments: [remoteID, now, nextPoll, batchID])
        }
    }

    func batchesToPoll(now: Date) throws(OffpeakError) -> [BatchRecord] {
        try read { db in
            try BatchRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM provider_batches WHERE state IN \(SQLStates.batches(.submitted,
                    .ended)) AND next_poll_at <= ?
                    ORDER BY next_poll_at
                    """, arguments: [now])
        }
    }

    func preparingBatches() throws(OffpeakError) -> [BatchRecord] {
        try read { db in
            try BatchRecord.fetchAll(
                db,
                sql:
                    "SELECT * FROM provider_batches WHERE state = \(SQLStates.batch(.preparing)) ORDER BY prepared_at"
            )
        }
    }

    func batch(id: String) throws(OffpeakError) -> BatchRecord? {
        try read { db in try BatchRecord.fetchOne(db, key: id) }
    }

    func batches(runID: String) throws(OffpeakError) -> [BatchRecord] {
        try read { db in
            try BatchRecord.filter(Column("run_id") == runID).order(Column("prepared_at")).fetchAll(db)
        }
    }

    func items(batchID: String) throws(OffpeakError) -> [BatchItemRecord] {
        try read { db in
            try BatchItemRecord.filter(Column("batch_id") == batchID)
                .order(Column("custom_id"), Column("slot")).fetchAll(db)
        }
    }

    func recordPoll(
        batchID: String, status: String, counts: RemoteBatch.Counts, expiresAt: Date?, next: Date
    ) throws(OffpeakError) {
        try write { db in
            var batch = try SQLiteStore.batch(batchID, db)
            batch.notePoll(status: status, counts: counts, expiresAt: expiresAt, next: next)
            try batch.update(db)
        }
    }

    func openBatchLoad(runID: String) throws(OffpeakError) -> Spend {
        try read { db in
            var load = Spend()
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT TOTAL(requests) AS calls, TOTAL(worst_input_tokens) AS input,
                        TOTAL(worst_output_tokens) AS output, TOTAL(worst_dollars) AS dollars
                        FROM provider_batches WHERE run_id = ? AND state IN \(SQLStates.openBatches)
                        """, arguments: [runID])
            else { return load }
            load.calls = Int(row["calls"] as Double)
            load.inputTokens = Int(row["input"] as Double)
            load.outputTokens = Int(row["output"] as Double)
            load.dollars = row["dollars"]
            return load
        }
    }

    func hasOpenBatches(runID: String) throws(OffpeakError) -> Bool {
        try read { db in
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (SELECT 1 FROM provider_batches
                    WHERE run_id = ? AND state IN \(SQLStates.openBatches))
                    """, arguments: [runID]) ?? false
        }
    }

    func openBatches() throws(OffpeakError) -> [BatchRecord] {
        try read { db in
            try BatchRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM provider_batches WHERE state IN \(SQLStates.openBatches)
                    ORDER BY prepared_at
                    """)
        }
    }

    func markEnded(batchID: String, now: Date) throws(OffpeakError) {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE provider_batches SET state = \(SQLStates.batch(.ended)), ended_at = ?, next_poll_at = ?
                    WHERE id = ? AND state = \(SQLStates.batch(.submitted))
                    """,
                arguments: [now, now, batchID])
        }
    }

    func reschedulePoll(batchID: String, next: Date) throws(OffpeakError) {
        try write { db in
            try db.execute(
                sql: "UPDATE provider_batches SET next_poll_at = ? WHERE id = ?", arguments: [next, batchID])
        }
    }
}

extension SQLiteStore {
    func batchCalls(batchID: String) throws(OffpeakError) -> [(customID: String, requests: [RequestRecord])] {
        try read { db in
            let items = try BatchItemRecord.filter(Column("batch_id") == batchID)
                .order(Column("custom_id"), Column("slot")).fetchAll(db)
            let requests = try StoredPayload.expand(
                RequestRecord.filter(keys: items.map(\.requestId)).fetchAll(db), db)
            let byID = Dictionary(requests.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            return BatchItemRecord.calls(
                items.compactMap { item in byID[item.requestId].map { (item.customId, $0) } })
        }
    }

    func batchAudits(batchID: String) throws(OffpeakError) -> [(
        audit: BatchAuditRecord, request: RequestRecord
    )] {
        try read { db in
            let audits = try BatchAuditRecord.filter(Column("batch_id") == batchID).fetchAll(db)
                .sorted {
                    (BatchRecord.auditIndex($0.customId) ?? 0) < (BatchRecord.auditIndex($1.customId) ?? 0)
                }
            let requests = try StoredPayload.expand(
                RequestRecord.filter(keys: audits.map(\.requestId)).fetchAll(db), db)
            let byID = Dictionary(requests.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            return audits.compactMap { audit in byID[audit.requestId].map { (audit, $0) } }
        }
    }

    func knownRemoteIDs() throws(OffpeakError) -> Set<String> {
        try read { db in
            Set(
                try String.fetchAll(
                    db, sql: "SELECT remote_id FROM provider_batches WHERE remote_id IS NOT NULL"))
        }
    }
}

extension SQLiteStore {
    func nextBatchPollOnly(runID: String, now: Date) throws(OffpeakError) -> Date? {
        try read { db in
            let work =
                try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM requests WHERE run_id = ?
                        AND state IN \(SQLStates.unsent))
                        """, arguments: [runID]) ?? true
            guard !work else { return nil }
            let open = try BatchRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM provider_batches WHERE run_id = ?
                    AND state IN \(SQLStates.openBatches)
                    """, arguments: [runID])
            return BatchRecord.onlyPollAhead(open: open, now: now)
        }
    }
}
