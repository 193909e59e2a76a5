import Foundation
import GRDB

extension SQLiteStore {
    func openRun(job: String, creating fresh: RunRecord?, requests: [RequestRecord], lease: LeaseRecord?)
        throws(OffpeakError) -> (run: RunRecord, created: Bool)?
    {
        try write { db -> (run: RunRecord, created: Bool)? in
            if let open = try SQLiteStore.resumableRun(in: db, job: job) { return (open, false) }
            guard let fresh else { return nil }
            try fresh.insert(db)
            var inserter = try RequestInserter(db)
            for request in requests { try inserter.insertNew(request) }
            try lease?.save(db)
            return (fresh, true)
        }
    }

    func insert(run: RunRecord, requests: [RequestRecord]) throws(OffpeakError) {
        try write { db in
            try run.insert(db)
            var inserter = try RequestInserter(db)
            for request in requests { try inserter.insertNew(request) }
        }
    }

    @discardableResult
    func merge(requests: [RequestRecord], into runID: String) throws(OffpeakError) -> [String] {
        try write { db in
            let existing = try StoredPayload.expand(
                RequestRecord.fetchAll(
                    db, sql: "SELECT * FROM requests WHERE run_id = ? AND \(SQLiteStore.specOrStepSQL)",
                    arguments: [runID]), db)
            let byItem = Dictionary(existing.map { ($0.itemId, $0) }, uniquingKeysWith: { first, _ in first })
            let (deleted, dropped) = RequestMerge.removals(
                existing: existing, planned: Set(requests.map(\.itemId)))
            for old in deleted { try old.delete(db) }
            var inserter = try RequestInserter(db)
            for request in requests {
                let stored =
                    try byItem[request.itemId]
                    ?? StoredPayload.expand(
                        RequestRecord.filter(Column("run_id") == runID && Column("item_id") == request.itemId)
                            .fetchOne(db), db)
                switch RequestMerge.change(request, stored: stored) {
                case .insert(let new): try inserter.insertNew(new)
                case .update(let changed): try changed.update(db)
                case nil: continue
                }
            }
            let total = try SQLiteStore.itemCounts(db, runID: runID).total
            try db.execute(
                sql: "UPDATE runs SET items_total = ? WHERE id = ?", arguments: [total, runID])
            return dropped
        }
    }

    /// Requests from the spec or steps of long items, as the partial index `requests_by_run_source`
    /// spells it (a query must, to use it): `RequestSource.spec`, then `RequestSource.steps`.
    static let specOrStepSQL = "source IN ('spec', 'chunk', 'reduce')"

    func checkpoint(runID: String) throws(OffpeakError) -> CheckpointRecord? {
        try read { db in try CheckpointRecord.fetchOne(db, key: runID) }
    }

    func requests(runID: String, states: [RequestRecord.State]? = nil) throws(OffpeakError)
        -> [RequestRecord]
    {
        try read { db in
            var query = RequestRecord.filter(Column("run_id") == runID)
            if let states { query = query.filter(states.map(\.rawValue).contains(Column("state"))) }
            return try StoredPayload.expand(
                query.order(Column("position"), Column("item_id")).fetchAll(db), db)
        }
    }

    func results(runID: String) throws(OffpeakError) -> [String: ResultRecord] {
        try read { db in
            let rows = try ResultRecord.filter(Column("run_id") == runID).fetchAll(db)
            return Dictionary(rows.map { ($0.requestId, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    func commit(_ calls: [CallCommit]) throws(OffpeakError) -> CallCommit.Committed {
        guard let last = calls.last else { throw OffpeakError(.software, "a commit of no call") }
        for call in calls { try call.cache?.checkDates() }
        defer { if calls.contains(where: { $0.cache != nil }) { CacheLookups.noteWrite() } }
        return try write { db in
            var fitness: [String: BatchFitness] = [:]
            var evicted = 0
            if let lease = last.lease {
                try SQLiteStore.renew(lease, runID: last.run.id, requests: calls.flatMap(\.requestIDs), db)
            }
            for call in calls {
                if let change = call.fitness { fitness[change.model] = try SQLiteStore.update(change, db) }
                try SQLiteStore.write(call, db)
                evicted += try call.cache.map { cache throws in try SQLiteStore.save(cache, db) } ?? 0
            }
            let lastID = calls.reversed().lazy.compactMap(\.lastRequestID).first
            let saved = try SQLiteStore.saveProgress(
                db, run: last.run, segment: last.segment, lastRequestID: lastID,
                wholeRun: last.lease?.leased ?? true)
            return CallCommit.Committed(
                run: saved, spend: try SpendRules.runSpend(SQLiteConnection(db: db), runID: last.run.id),
                fitness: fitness, evicted: evicted)
        }
    }

    /// One call's rows in a commit (`commit(_:)`): its reservation given back, its ledger row with
    /// its model's latency, its answers, its audits queued, and its other items' new states.
    private static func write(_ call: CallCommit, _ db: Database) throws {
        if let reservation = call.reservation {
            try BudgetRules.release(reservation, SQLiteConnection(db: db))
        }
        var ledger = call.ledger
        if let ledger, !ledger.cacheHit, !ledger.failed {
            try SQLiteStore.record(LatencySample(ledger), db)
        }
        try ledger?.insert(db)
        let now = Date()
        for result in call.results { try SQLiteStore.insertAnswer(result, ledgerID: ledger?.id, at: now, db) }
        for audit in call.audits { try SQLiteStore.queue(audit, runID: call.run.id, db) }
        for (id, reason) in call.retry {
            try db.run(
                "UPDATE requests SET attempts = attempts + 1, error = ?, updated_at = ? WHERE id = ?",
                [reason, now, id])
        }
        for (id, reason, at) in call.later {
            try db.run(
                """
                UPDATE requests SET state = \(SQLStates.request(.retrying)), error = ?,
                attempts = attempts + 1,
                next_attempt_at = ?, updated_at = ? WHERE id = ?
                """, [reason, at, now, id])
        }
        for (id, reason, at) in call.postponed {
            try db.run(
                """
                UPDATE requests SET state = \(SQLStates.request(.retrying)), error = ?,
                next_attempt_at = ?, updated_at = ? WHERE id = ?
                """, [reason, at, now, id])
        }
        for (id, reason) in call.failed {
            try db.run(
                """
                UPDATE requests SET state = \(SQLStates.request(.failed)), error = ?,
                attempts = attempts + 1, updated_at = ?
                WHERE id = ?
                """, [reason, now, id])
        }
    }

    func commitCacheHits(
        run: RunRecord, _ hits: [(ledger: LedgerEntry, result: ResultRecord)],
        lease: RunHold
    ) throws(OffpeakError) {
        try write { db in
            try SQLiteStore.renew(lease, runID: run.id, requests: hits.map(\.result.requestId), db)
            for (ledger, result) in hits {
                var ledger = ledger
                try ledger.insert(db)
                try SQLiteStore.insertAnswer(result, ledgerID: ledger.id, at: ledger.at, db)
            }
            try SQLiteStore.saveProgress(
                db, run: run, segment: 0, lastRequestID: hits.last?.result.requestId, wholeRun: lease.leased)
        }
    }

    /// Stores one item's answer, tied to the ledger row that paid for it, and marks its request done.
    static func insertAnswer(_ result: ResultRecord, ledgerID: Int64?, at now: Date, _ db: Database)
        throws
    {
        var result = result
        result.ledgerId = ledgerID
        try result.insert(db)
        try db.run(
            "UPDATE requests SET state = \(SQLStates.request(.done)), error = NULL, updated_at = ? WHERE id = ?",
            [now, result.requestId])
    }

    /// Extends this process's lease on the run (when it holds it) and its claim: every commit is
    /// also a heartbeat. A lease another process took over refuses the commit (`LeaseLost`), as
    /// does a request of it no longer due (`ClaimLost`).
    static func renew(_ hold: RunHold, runID: String, requests: [String], _ db: Database) throws {
        let now = Date()
        if hold.leased {
            try db.run(
                "UPDATE leases SET heartbeat_at = ?, expires_at = ? WHERE run_id = ? AND owner = ?",
                [now, now + hold.ttl, runID, hold.owner])
            if db.changesCount == 0,
                let holder = try String.fetchOne(
                    db, sql: "SELECT owner FROM leases WHERE run_id = ?", arguments: [runID])
            {
                throw LeaseLost.error(runID: runID, holder: holder)
            }
        }
        try db.run(
            "UPDATE claims SET expires_at = ? WHERE run_id = ? AND owner = ?",
            [now + hold.ttl, runID, hold.owner])
        guard !requests.isEmpty else { return }
        let gone = try Bool.fetchOne(
            db,
            sql: """
                SELECT EXISTS (SELECT 1 FROM requests WHERE id IN (\(databaseQuestionMarks(count: requests.count)))
                    AND state NOT IN \(SQLStates.requests(.pending, .retrying)))
                """, arguments: StatementArguments(requests))
        if gone == true { throw ClaimLost.error(runID: runID) }
    }

    /// Writes the run, with its item counts as the counters hold them (not the steps of long items),
    /// and its checkpoint.
    /// - Parameter wholeRun: false for a helper's commit (`RunHold.leased`): only the counts are
    ///   written, and the rest of the row stays the lease holder's.
    /// - Returns: the run as saved, with its counters.
    @discardableResult
    static func saveProgress(
        _ db: Database, run: RunRecord, segment: Int, lastRequestID: String?, wholeRun: Bool = true
    ) throws -> RunRecord {
        var run = run
        let counts = try SQLiteStore.itemCounts(db, runID: run.id)
        run.itemsDone = counts.done
        run.itemsFailed = counts.failed
        run.itemsCached = counts.cached
        run.updatedAt = Date()
        if wholeRun {
            try RunRules.update(run, SQLiteConnection(db: db))
        } else {
            try db.execute(
                sql: """
                    UPDATE runs SET items_done = ?, items_failed = ?, items_cached = ?, updated_at = ?
                    WHERE id = ?
                    """, arguments: [run.itemsDone, run.itemsFailed, run.itemsCached, run.updatedAt, run.id])
        }
        try CheckpointRecord(
            runId: run.id, segment: segment, done: run.itemsDone, lastRequestId: lastRequestID,
            updatedAt: run.updatedAt
        ).save(db)
        return run
    }
}
