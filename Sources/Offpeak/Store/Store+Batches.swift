import Foundation
import GRDB

/// The batch lane's bookkeeping. Each write is one transaction, so a process killed at any moment
/// leaves the batch and its requests in a state the next tick can reconcile: nothing lost, nothing
/// booked twice.
extension Store {
    /// Commits a new `preparing` batch and its items, and moves those requests to `in_batch`,
    /// BEFORE any call creates it at the provider. `calls` holds the request ids of each provider
    /// request in order: the n-th gets custom id `<batch id>_<n>`, each of its requests the slot of
    /// its place in the batched prompt. Only requests still `pending` or `retrying` are taken; a
    /// request in another state is refused and nothing is committed.
    func prepareBatch(
        runID: String, provider: String, model: String, calls: [[String]], worstDollars: Double,
        worstTokens: (input: Int, output: Int) = (0, 0), now: Date
    ) throws(OffpeakError) -> BatchRecord {
        try write { db in
            var batch = BatchRecord(
                id: BatchRecord.newID(), runId: runID, provider: provider, model: model, remoteId: nil,
                state: .preparing, preparedAt: now, worstDollars: worstDollars)
            batch.worstInputTokens = worstTokens.input
            batch.worstOutputTokens = worstTokens.output
            batch.requests = calls.count
            batch.items = calls.reduce(0) { $0 + $1.count }
            try batch.insert(db)
            for (index, requestIDs) in calls.enumerated() {
                for (slot, requestID) in requestIDs.enumerated() {
                    try db.execute(
                        sql: """
                            UPDATE requests SET state = 'in_batch', next_attempt_at = NULL, updated_at = ?
                            WHERE id = ? AND run_id = ? AND state IN ('pending', 'retrying')
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
            return batch
        }
    }

    /// `prepareBatch` with each request alone in its provider request.
    func prepareBatch(
        runID: String, provider: String, model: String, requestIDs: [String], worstDollars: Double, now: Date
    ) throws(OffpeakError) -> BatchRecord {
        try prepareBatch(
            runID: runID, provider: provider, model: model, calls: requestIDs.map { [$0] },
            worstDollars: worstDollars, now: now)
    }

    /// Stores the provider's id for a batch just created: `submitted`, polled from `nextPoll`.
    /// Storing the same id again changes nothing; a different one is refused (one batch, one id).
    func recordSubmitted(batchID: String, remoteID: String, now: Date, nextPoll: Date) throws(OffpeakError) {
        try write { db in
            let batch = try Store.batch(batchID, db)
            if let known = batch.remoteId {
                guard known == remoteID else {
                    throw OffpeakError(
                        .software, "batch \(batchID) already has provider id \(known), not \(remoteID)")
                }
                return
            }
            try db.execute(
                sql: """
                    UPDATE provider_batches SET remote_id = ?, state = 'submitted', submitted_at = ?,
                    next_poll_at = ? WHERE id = ?
                    """,
                arguments: [remoteID, now, nextPoll, batchID])
        }
    }

    /// Batches whose poll is due by `now`: submitted ones to ask about, ended ones to collect.
    func batchesToPoll(now: Date) throws(OffpeakError) -> [BatchRecord] {
        try read { db in
            try BatchRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM provider_batches WHERE state IN ('submitted', 'ended') AND next_poll_at <= ?
                    ORDER BY next_poll_at
                    """, arguments: [now])
        }
    }

    /// Batches committed but never given a provider id: each was created or not; reconciliation decides.
    func preparingBatches() throws(OffpeakError) -> [BatchRecord] {
        try read { db in
            try BatchRecord.fetchAll(
                db, sql: "SELECT * FROM provider_batches WHERE state = 'preparing' ORDER BY prepared_at")
        }
    }

    func batch(id: String) throws(OffpeakError) -> BatchRecord? {
        try read { db in try BatchRecord.fetchOne(db, key: id) }
    }

    /// A run's batches, oldest first.
    func batches(runID: String) throws(OffpeakError) -> [BatchRecord] {
        try read { db in
            try BatchRecord.filter(Column("run_id") == runID).order(Column("prepared_at")).fetchAll(db)
        }
    }

    /// A batch's items, by custom id and slot.
    func items(batchID: String) throws(OffpeakError) -> [BatchItemRecord] {
        try read { db in
            try BatchItemRecord.filter(Column("batch_id") == batchID)
                .order(Column("custom_id"), Column("slot")).fetchAll(db)
        }
    }

    /// What the provider said at a poll: its state, counts and expiry, and when to ask next.
    func recordPoll(
        batchID: String, status: String, counts: RemoteBatch.Counts, expiresAt: Date?, next: Date
    ) throws(OffpeakError) {
        try write { db in
            var batch = try Store.batch(batchID, db)
            batch.remoteStatus = status
            batch.counts = counts
            batch.expiresAt = expiresAt ?? batch.expiresAt
            batch.polls += 1
            if batch.isOpen { batch.nextPollAt = next }
            try batch.update(db)
        }
    }

    /// The worst case of a run's batches still out, as a spend (their requests as calls, their
    /// worst tokens and dollars): counted against its budget until they are collected.
    func openBatchLoad(runID: String) throws(OffpeakError) -> Spend {
        try read { db in
            var load = Spend()
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT TOTAL(requests) AS calls, TOTAL(worst_input_tokens) AS input,
                        TOTAL(worst_output_tokens) AS output, TOTAL(worst_dollars) AS dollars
                        FROM provider_batches WHERE run_id = ? AND state IN ('preparing', 'submitted', 'ended')
                        """, arguments: [runID])
            else { return load }
            load.calls = Int(row["calls"] as Double)
            load.inputTokens = Int(row["input"] as Double)
            load.outputTokens = Int(row["output"] as Double)
            load.dollars = row["dollars"]
            return load
        }
    }

    /// Whether a run has provider batches still out (prepared, submitted or ended, not collected).
    func hasOpenBatches(runID: String) throws(OffpeakError) -> Bool {
        try read { db in
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (SELECT 1 FROM provider_batches
                    WHERE run_id = ? AND state IN ('preparing', 'submitted', 'ended'))
                    """, arguments: [runID]) ?? false
        }
    }

    /// Every batch still out (any run), oldest first: what `offpeak batches` and `status` show.
    func openBatches() throws(OffpeakError) -> [BatchRecord] {
        try read { db in
            try BatchRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM provider_batches WHERE state IN ('preparing', 'submitted', 'ended')
                    ORDER BY prepared_at
                    """)
        }
    }

    /// The provider says the batch's results are ready: `ended`, due to collect at once.
    func markEnded(batchID: String, now: Date) throws(OffpeakError) {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE provider_batches SET state = 'ended', ended_at = ?, next_poll_at = ?
                    WHERE id = ? AND state = 'submitted'
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

extension Store {
    /// A batch's provider requests: each custom id with its requests in slot order, as sent.
    func batchCalls(batchID: String) throws(OffpeakError) -> [(customID: String, requests: [RequestRecord])] {
        try read { db in
            let items = try BatchItemRecord.filter(Column("batch_id") == batchID)
                .order(Column("custom_id"), Column("slot")).fetchAll(db)
            let requests = try StoredPayload.expand(
                RequestRecord.filter(keys: items.map(\.requestId)).fetchAll(db), db)
            let byID = Dictionary(requests.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            var calls: [(customID: String, requests: [RequestRecord])] = []
            for item in items {
                guard let request = byID[item.requestId] else { continue }
                if calls.last?.customID == item.customId {
                    calls[calls.count - 1].requests.append(request)
                } else {
                    calls.append((item.customId, [request]))
                }
            }
            return calls
        }
    }

    /// Every provider batch id the store holds: a batch found again must be none of these.
    func knownRemoteIDs() throws(OffpeakError) -> Set<String> {
        try read { db in
            Set(
                try String.fetchAll(
                    db, sql: "SELECT remote_id FROM provider_batches WHERE remote_id IS NOT NULL"))
        }
    }
}

extension Store {
    /// When a run has nothing to do but wait for its provider batches, none of them due a poll:
    /// the earliest poll. Nil when a pass has work (a request pending, retrying or waiting, a batch
    /// due or never recorded) or the run has no batch out.
    func nextBatchPollOnly(runID: String, now: Date) throws(OffpeakError) -> Date? {
        try read { db in
            let work =
                try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM requests WHERE run_id = ?
                        AND state IN ('pending', 'retrying', 'waiting'))
                        """, arguments: [runID]) ?? true
            guard !work else { return nil }
            let open = try BatchRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM provider_batches WHERE run_id = ?
                    AND state IN ('preparing', 'submitted', 'ended')
                    """, arguments: [runID])
            guard !open.isEmpty, open.allSatisfy({ $0.state != .preparing && ($0.nextPollAt ?? now) > now })
            else {
                return nil
            }
            return open.compactMap(\.nextPollAt).min()
        }
    }
}
