import Foundation
import PostgresNIO

/// An answered call committed on PostgreSQL: everything in one transaction, the run's row locked
/// first so commits to one run take turns (as SQLite's one writer makes them) and each reads the
/// counters the one before it left.
///
/// Each round trip costs more than the statement it carries, so what goes together goes in one
/// statement (data-modifying `WITH` clauses): locking the run with renewing its lease and releasing
/// the reservation; the ledger row with the model's latency; the answers with their requests'
/// state; the checkpoint with reading the spend. And what nothing reads before the end is sent
/// without waiting (`PostgresStore.send`, `sendReading`): the answers name the ledger row by the
/// session's last id, and the counts and spend are read with `COMMIT`. A call with answers takes
/// two round trips plus one to read the model's fitness and one for the cache's size, `BEGIN` and
/// `COMMIT` included. The counters' triggers fire at the end of each statement and see all it
/// wrote, so they count the same as with one statement each.
extension PostgresEngine {
    func commit(_ calls: [CallCommit]) throws(OffpeakError) -> CallCommit.Committed {
        try startCommit(calls).committed()
    }

    /// The calls' transaction sent whole, `COMMIT` included (`PostgresStore.transactionSent`): calls
    /// with answers wait on no round trip of their own. What it reads back (the counts and spend,
    /// whether the fitness records and evictions went as sent) is read by `committed()`.
    func startCommit(_ calls: [CallCommit]) throws(OffpeakError) -> any PendingCommit {
        guard let last = calls.last else { throw OffpeakError(.software, "a commit of no call") }
        for call in calls { try call.cache?.checkDates() }
        let (parts, transaction) = try store.transactionSent { () throws(OffpeakError) -> SentCommit.Parts in
            try lockRun(
                last.run.id, renewing: last.lease, releasing: calls.compactMap(\.reservation),
                requests: calls.flatMap(\.requestIDs))
            var fitness: [FitnessUpdate] = []
            for call in calls {
                if let change = call.fitness { fitness.append(try sendUpdate(change)) }
                if let ledger = call.ledger {
                    // Sent, not waited for: the answers name its id as the session's last (`.justInserted`).
                    let sample = !ledger.cacheHit && !ledger.failed ? LatencySample(ledger) : nil
                    try store.send(try ledgerStatement([ledger], latency: sample))
                }
                let now = Date()
                try insertAnswers(
                    call.results,
                    ledger: call.ledger != nil ? .justInserted : .ids(call.results.map { _ in nil }),
                    at: call.results.map { _ in now })
                try sendOutcomes(call, at: now)
                try sendQueue(call.audits, runID: call.run.id)
            }
            // The cache's lock last: commits of other runs wait for it until this one ends.
            let evictions = try calls.compactMap(\.cache).map { cache throws(OffpeakError) in
                try sendSave(cache)
            }
            return SentCommit.Parts(
                progress: try saveProgress(
                    last.run, segment: last.segment,
                    lastRequestID: calls.reversed().lazy.compactMap(\.lastRequestID).first,
                    wholeRun: last.lease?.leased ?? true),
                fitness: fitness,
                evictions: evictions)
        }
        return SentCommit(
            engine: self, parts: parts, transaction: transaction,
            cacheBytes: calls.compactMap(\.cache).last?.maxBytes)
    }

    /// The requests a call leaves to ask again now (`retry`), at a time (`later`, `postponed`), or
    /// failed for good.
    private func sendOutcomes(_ call: CallCommit, at now: Date) throws(OffpeakError) {
        if !call.retry.isEmpty {
            try store.send(
                """
                UPDATE requests r SET attempts = r.attempts + 1, error = u.reason, updated_at = \(now)
                FROM unnest(\(call.retry.map(\.id))::text[], \(call.retry.map(\.reason))::text[])
                    AS u(id, reason)
                WHERE r.id = u.id
                """)
        }
        if !call.later.isEmpty {
            try store.send(
                """
                UPDATE requests r SET state = \(RequestRecord.State.retrying.rawValue), error = u.reason,
                    attempts = r.attempts + 1, next_attempt_at = u.at, updated_at = \(now)
                FROM unnest(\(call.later.map(\.id))::text[], \(call.later.map(\.reason))::text[],
                    \(call.later.map(\.at))::timestamptz[]) AS u(id, reason, at)
                WHERE r.id = u.id
                """)
        }
        if !call.postponed.isEmpty {
            try store.send(
                """
                UPDATE requests r SET state = \(RequestRecord.State.retrying.rawValue), error = u.reason,
                    next_attempt_at = u.at, updated_at = \(now)
                FROM unnest(\(call.postponed.map(\.id))::text[], \(call.postponed.map(\.reason))::text[],
                    \(call.postponed.map(\.at))::timestamptz[]) AS u(id, reason, at)
                WHERE r.id = u.id
                """)
        }
        if !call.failed.isEmpty {
            try store.send(
                """
                UPDATE requests r SET state = \(RequestRecord.State.failed.rawValue), error = u.reason,
                    attempts = r.attempts + 1, updated_at = \(now)
                FROM unnest(\(call.failed.map(\.id))::text[], \(call.failed.map(\.reason))::text[])
                    AS u(id, reason)
                WHERE r.id = u.id
                """)
        }
    }

    /// A call's commit sent whole (`startCommit`), to be read once it is done.
    struct SentCommit: PendingCommit {
        /// What the transaction reads back.
        struct Parts: Sendable {
            var progress: SavedProgress
            var fitness: [FitnessUpdate]
            var evictions: [PostgresStore.SentRows]
        }

        let engine: PostgresEngine
        let parts: Parts
        let transaction: PostgresStore.SentTransaction
        /// The cache's cap, when the call wrote to the cache.
        let cacheBytes: Int?

        /// Waits for the transaction, then reads the counts and spend; a fitness change that met
        /// another process's record is made again on it, and an eviction that took a whole page
        /// evicts the rest, each in a transaction of its own.
        func committed() throws(OffpeakError) -> CallCommit.Committed {
            try transaction.wait()
            let (run, spend) = try parts.progress.read()
            var fitness: [String: BatchFitness] = [:]
            for update in parts.fitness {
                fitness[update.change.model] = try engine.outcome(of: update)
            }
            var evicted = 0
            var fullPage = false
            for eviction in parts.evictions {
                let count = try eviction.get().count
                evicted += count
                fullPage = fullPage || count == CacheRules.evictionPage
            }
            if fullPage, let cacheBytes {
                evicted += try engine.evictRest(maxBytes: cacheBytes)
            }
            return CallCommit.Committed(run: run, spend: spend, fitness: fitness, evicted: evicted)
        }
    }

    func commitCacheHits(
        run: RunRecord, _ hits: [(ledger: LedgerEntry, result: ResultRecord)],
        lease: RunHold
    ) throws(OffpeakError) {
        try store.transaction { () throws(OffpeakError) in
            try lockRun(run.id, renewing: lease, requests: hits.map(\.result.requestId))
            let ids = try insertLedger(hits.map(\.ledger), latency: nil)
            // Each answer's request updated at its ledger row's time, as SQLite writes them.
            try insertAnswers(hits.map(\.result), ledger: .ids(ids), at: hits.map(\.ledger.at))
            _ = try saveProgress(
                run, segment: 0, lastRequestID: hits.last?.result.requestId, wholeRun: lease.leased
            ).read()
        }
    }

    /// Locks the run's row (`lockRun`), renewing the lease and the claim and releasing the
    /// reservation in the same statement: every commit is also a heartbeat. A lease another process
    /// took over (this one's expired while it could not reach the store) fails the statement
    /// (`offpeak_lease_lost`), and with it the transaction: the call's answers are not kept beside
    /// the new holder's. So does a request no longer due (`offpeak_claim_lost`), checked by a
    /// statement of its own: its snapshot is taken once the run is locked, so it sees what the
    /// commit before it left.
    /// - Parameter requests: the requests the commit answers, fails or leaves to ask again.
    func lockRun(
        _ runID: String, renewing hold: RunHold?, releasing reservations: [Int64] = [],
        requests: [String] = []
    ) throws(OffpeakError) {
        let now = Date()
        let (held, leased, owner) = (hold != nil, hold?.leased ?? false, hold?.owner ?? "")
        let expires = now + (hold?.ttl ?? 0)
        try store.send(
            """
            WITH renewed AS (
                UPDATE leases SET heartbeat_at = \(now), expires_at = \(expires)
                WHERE \(leased) AND run_id = \(runID) AND owner = \(owner) RETURNING owner),
            claimed AS (
                UPDATE claims SET expires_at = \(expires) WHERE \(held) AND run_id = \(runID) AND owner = \(owner)),
            released AS (DELETE FROM budget_reservations WHERE id = ANY(\(reservations)::bigint[]))
            SELECT CASE WHEN \(leased) AND NOT EXISTS (SELECT 1 FROM renewed)
                    AND EXISTS (SELECT 1 FROM leases WHERE run_id = \(runID))
                THEN offpeak_lease_lost(id, (SELECT owner FROM leases WHERE run_id = \(runID))) END
            FROM runs WHERE id = \(runID) FOR UPDATE
            """)
        guard held, !requests.isEmpty else { return }
        try store.send(
            """
            SELECT offpeak_claim_lost(\(runID)) FROM requests
            WHERE id = ANY(\(requests)::text[]) AND state NOT IN \(unescaped: SQLStates.requests(.pending, .retrying))
            LIMIT 1
            """)
    }

    /// Writes the run, with its item counts as the counters hold them (not the steps of long
    /// items), and its checkpoint, and reads the counts and the run's spend: two statements sent
    /// ahead (`PostgresStore.send`, `sendReading`), read with the transaction's next round trip.
    /// - Returns: how to read the run as saved, with its counters, and its spend; it throws a store
    ///   error when there is no such run, as `updateRow` does.
    /// - Parameter wholeRun: false for a helper's commit (`RunHold.leased`): only the counts are
    ///   written, and the rest of the row stays the lease holder's.
    func saveProgress(_ run: RunRecord, segment: Int, lastRequestID: String?, wholeRun: Bool = true)
        throws(OffpeakError) -> SavedProgress
    {
        var run = run
        run.updatedAt = Date()
        if wholeRun {
            try store.send(try updateStatement(run, countsFromCounters: true))
        } else {
            try store.send(
                """
                UPDATE runs SET items_done = coalesce(c.done, 0), items_failed = coalesce(c.failed, 0),
                    items_cached = coalesce(c.cached, 0), updated_at = \(run.updatedAt)
                FROM (SELECT \(run.id)::text AS run_id) k LEFT JOIN run_items c ON c.run_id = k.run_id
                WHERE runs.id = k.run_id
                """)
        }
        let sent = try store.sendReading(
            """
            WITH saved AS (
                INSERT INTO checkpoints (run_id, segment, done, last_request_id, updated_at)
                SELECT id, \(segment), items_done, \(lastRequestID), \(run.updatedAt) FROM runs WHERE id = \(run.id)
                ON CONFLICT (run_id) DO UPDATE SET segment = excluded.segment, done = excluded.done,
                    last_request_id = excluded.last_request_id, updated_at = excluded.updated_at)
            SELECT r.items_done, r.items_failed, r.items_cached, \(unescaped: Self.runSpendSums(of: "s"))
            FROM runs r LEFT JOIN run_spend s ON s.run_id = r.id WHERE r.id = \(run.id)
            """)
        return SavedProgress(engine: self, run: run, sent: sent)
    }

    /// A run's progress sent to be saved (`saveProgress`), its counts and spend to be read.
    struct SavedProgress: Sendable {
        let engine: PostgresEngine
        let run: RunRecord
        let sent: PostgresStore.SentRows

        /// The run as saved, with its counters, and its spend; waits for them if the transaction
        /// has not moved on since they were sent.
        /// - Throws: a store error when there is no such run, as `updateRow` does.
        func read() throws(OffpeakError) -> (RunRecord, Spend) {
            let store = engine.store
            guard let row = try sent.get().first else {
                throw OffpeakError(
                    .ioError, "PostgreSQL at \(store.url.endpoint) has no run \(run.id) to update")
            }
            var run = run
            let columns = PostgresColumns(row, store)
            run.itemsDone = try columns("items_done")
            run.itemsFailed = try columns("items_failed")
            run.itemsCached = try columns("items_cached")
            return (run, try engine.spend(row))
        }
    }

    /// `run_spend`'s sums (`spendQuery`) from the row of `table`, zero where it has none.
    static func runSpendSums(of table: String) -> String {
        PostgresSchema.runSpendColumns.map { "coalesce(\(table).\($0), 0) AS \($0)" }.joined(separator: ", ")
    }

    static let spendQuery = "SELECT \(PostgresSchema.runSpendColumns.joined(separator: ", ")) FROM run_spend"

    /// A row of `run_spend` (`spendQuery`) or of `spendColumns`, read as the rules read one
    /// (`Spend(row:)`).
    func spend(_ row: PostgresRow) throws(OffpeakError) -> Spend {
        try Spend(row: PostgresSQLRow(columns: PostgresColumns(row, store)))
    }
}
