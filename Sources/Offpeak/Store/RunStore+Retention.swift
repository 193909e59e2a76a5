import Foundation

/// What pruning removed (or, for a dry run, would remove).
public struct PruneReport: Sendable, Equatable, Encodable {
    /// Finished runs whose requests and results were removed; their rows stay, marked pruned.
    public var runs = 0
    public var requests = 0
    public var results = 0
    /// System prompts stored once (`shared_texts`) that no request uses any more.
    public var sharedTexts = 0
    /// The ledger rows of pruned runs rolled up by day (`LedgerRollUp`).
    public var ledger = LedgerRollUpReport()

    /// `2 finished runs (8 requests, 8 results, 1 stored prompt)`.
    var sentence: String {
        var parts = [Plural.count(requests, "request"), Plural.count(results, "result")]
        if sharedTexts > 0 { parts.append(Plural.count(sharedTexts, "stored prompt")) }
        return "\(Plural.count(runs, "finished run")) (\(parts.joined(separator: ", ")))"
    }

    /// `rolled up the ledger rows of 2 runs by day: 1253 rows into 3`, `verb` first.
    func ledgerSentence(_ verb: String) -> String {
        "\(verb) the ledger rows of \(Plural.count(ledger.runs, "run")) by day: "
            + "\(Plural.count(ledger.rows, "row")) into \(ledger.rowsLeft)"
    }

    mutating func add(_ other: PruneReport) {
        runs += other.runs
        requests += other.requests
        results += other.results
        sharedTexts += other.sharedTexts
        ledger.add(other.ledger)
    }
}

/// Retention's rules (issue 46, item 1), written once for both engines: which runs may be pruned,
/// and what pruning one removes and keeps.
///
/// A run is pruned once it has finished (completed, failed or canceled) and was last touched before
/// the horizon, and only when none of its requests is still to be sent, waiting or out in a
/// provider batch, so nothing pending, deferred or in a batch is ever removed; its outputs were
/// written when it finished. Pruning removes the run's requests (their results, queued audits and
/// batch rows with them, `ON DELETE CASCADE`), its provider batches, checkpoint, lease and claims,
/// and the spec it ran with. It keeps the run's row, marked `pruned_at`, its ledger rows and its
/// counters (every total of `costs` stays to the cent), and the ids of the spec items it answered
/// (`answered_items`), so a feed's entry is never asked twice.
extension RunStore where Self: SQLEngine {
    /// The finished runs last touched before `cutoff` and not pruned yet, oldest first, at most
    /// `limit`: through the partial index `runs_finished`.
    func prunableRuns(before cutoff: Date, limit: Int) throws(OffpeakError) -> [String] {
        try rows(
            """
            SELECT id FROM runs WHERE pruned_at IS NULL AND state IN \(unescaped: RunRules.finishedStates)
                AND updated_at < \(cutoff)
            ORDER BY updated_at LIMIT \(max(0, limit))
            """
        ).map { row throws(OffpeakError) -> String in try row("id") }
    }

    /// What pruning `runID` removes, without removing it; nil when it may not be pruned.
    func pruneCounts(runID: String) throws(OffpeakError) -> PruneReport? {
        try reading { sql throws(OffpeakError) -> PruneReport? in try RetentionRules.counts(sql, runID: runID)
        }
    }

    /// Prunes `runID` in one transaction, if it may still be pruned.
    /// - Returns: what it removed; nil when the run may not be pruned (work left in it).
    func prune(runID: String, at now: Date) throws(OffpeakError) -> PruneReport? {
        try writing { sql throws(OffpeakError) -> PruneReport? in
            try sql.lock(.run(runID))
            guard let report = try RetentionRules.counts(sql, runID: runID) else { return nil }
            try sql.execute(
                """
                INSERT INTO answered_items (job, item_id)
                SELECT DISTINCT job, item_id FROM requests
                WHERE run_id = \(runID) AND source = 'spec' AND state = \(unescaped: SQLStates.request(.done))
                ON CONFLICT (job, item_id) DO NOTHING
                """)
            try sql.execute("DELETE FROM provider_batches WHERE run_id = \(runID)")
            try sql.execute("DELETE FROM claims WHERE run_id = \(runID)")
            try sql.execute("DELETE FROM leases WHERE run_id = \(runID)")
            try sql.execute("DELETE FROM checkpoints WHERE run_id = \(runID)")
            try sql.execute("DELETE FROM requests WHERE run_id = \(runID)")
            // The spec it ran with goes too: a summarize job's holds every document's text.
            try sql.execute("UPDATE runs SET pruned_at = \(now), spec = NULL WHERE id = \(runID)")
            return report
        }
    }

    /// Removes the system prompts stored once that no request names any more (their last user
    /// pruned). Each is looked for in the requests' payloads, which stops at the first that names
    /// it: a prompt in use is found at once; one no longer used is read past every row, once.
    /// - Returns: how many were removed.
    func dropUnusedSharedTexts() throws(OffpeakError) -> Int {
        let hashes = try rows("SELECT hash FROM shared_texts").map { row throws(OffpeakError) -> String in
            try row("hash")
        }
        var dropped = 0
        for hash in hashes {
            let marker = String(UnicodeScalar(StoredPayload.marker))
            dropped += try writing { sql throws(OffpeakError) -> Int in
                // A request naming it is committed before this looks, or written after it is gone.
                try sql.lock(.sharedTexts)
                return try sql.execute(
                    """
                    DELETE FROM shared_texts WHERE hash = \(hash) AND NOT EXISTS (
                        SELECT 1 FROM requests WHERE payload LIKE \("%" + marker + hash + marker + "%"))
                    """)
            }
        }
        return dropped
    }

    /// When `runID` was pruned; nil when it was not (or there is no such run).
    func prunedAt(runID: String) throws(OffpeakError) -> Date? {
        try rows("SELECT pruned_at FROM runs WHERE id = \(runID)").first.flatMap { row throws(OffpeakError) in
            try row("pruned_at", as: Date?.self)
        }
    }
}

enum RetentionRules {
    /// What pruning `runID` removes, read in the transaction `sql` is in; nil when the run may not
    /// be pruned: not finished, pruned already, or a request of it still to be sent, waiting or out
    /// in a provider batch.
    static func counts(_ sql: any SQLConnection, runID: String) throws(OffpeakError) -> PruneReport? {
        guard
            let run = try sql.rows(
                """
                SELECT (SELECT count(*) FROM requests WHERE run_id = \(runID)) AS requests,
                    (SELECT count(*) FROM results WHERE run_id = \(runID)) AS results,
                    (SELECT count(*) FROM requests WHERE run_id = \(runID)
                        AND state IN \(unescaped: SQLStates.unfinished)) AS open
                FROM runs WHERE id = \(runID) AND pruned_at IS NULL
                    AND state IN \(unescaped: RunRules.finishedStates)
                """
            ).first,
            try run("open", as: Int.self) == 0
        else { return nil }
        return PruneReport(runs: 1, requests: try run("requests"), results: try run("results"))
    }
}
