import Foundation

extension Store {
    /// Prunes the finished runs last touched more than `keep` before `now` (`RunStore+Retention`),
    /// oldest first, at most `limit` of them (nil: every one), then removes the system prompts no
    /// request uses any more; then rolls up by day the ledger rows of the pruned runs last touched
    /// more than `keepLedger` before `now` (`LedgerRollUp`), at most `limit` runs again.
    /// - Parameters:
    ///   - keepLedger: nil keeps every ledger row (`retention.ledger: off`).
    ///   - dryRun: only count what would be removed (and rolled up, of the runs it would prune too).
    func prune(
        keeping keep: TimeInterval, keepingLedger keepLedger: TimeInterval?, now: Date, limit: Int?,
        dryRun: Bool = false, calendar: Calendar = .current
    ) throws(OffpeakError) -> PruneReport {
        var report = PruneReport()
        let limit = limit ?? Int(Int32.max)
        for id in try runs.prunableRuns(before: now - keep, limit: limit) {
            let removed = dryRun ? try runs.pruneCounts(runID: id) : try runs.prune(runID: id, at: now)
            if let removed { report.add(removed) }
        }
        if !dryRun, report.runs > 0 { report.sharedTexts = try runs.dropUnusedSharedTexts() }
        guard let keepLedger else { return report }
        var toRollUp = try ledger.runsToRollUp(before: now - keepLedger, limit: limit)
        if dryRun {  // the runs it would prune now, and roll up as well
            toRollUp += try runs.prunableRuns(before: now - keepLedger, limit: limit - toRollUp.count)
        }
        for id in toRollUp {
            report.ledger.add(try ledger.rollUpLedger(runID: id, calendar: calendar, at: now, dryRun: dryRun))
        }
        return report
    }

    /// Gives the space pruning freed back: SQLite's free pages to the file system, incrementally on
    /// a store made with `auto_vacuum = INCREMENTAL` (every store offpeak makes now), and with one
    /// whole `VACUUM` when `whole` (which also switches an older store to incremental); on
    /// PostgreSQL, a `VACUUM` of the tables pruning deletes from, so the next days' rows reuse the
    /// room in place at once rather than whenever autovacuum comes by (the tables stop growing).
    /// - Returns: the SQLite file's size before and after, in bytes; nil on PostgreSQL.
    func reclaimSpace(whole: Bool) throws(OffpeakError) -> (before: Int64, after: Int64)? {
        switch engine {
        case .sqlite(let store): return try store.reclaimSpace(whole: whole)
        case .postgres(let engine):
            try engine.store.query(
                """
                VACUUM (ANALYZE) requests, results, runs, shared_texts, provider_batches, batch_items,
                    checkpoints, audit_queue, ledger
                """)
            return nil
        }
    }
}
