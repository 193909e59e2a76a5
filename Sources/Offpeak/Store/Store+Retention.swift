import Foundation

extension Store {
    /// Prunes the finished runs last touched more than `keep` before `now` (`RunStore+Retention`),
    /// oldest first, at most `limit` of them (nil: every one), then removes the system prompts no
    /// request uses any more and gives the freed space back (`reclaimSpace`).
    /// - Parameter dryRun: only count what would be removed.
    func prune(keeping keep: TimeInterval, now: Date, limit: Int?, dryRun: Bool = false)
        throws(OffpeakError) -> PruneReport
    {
        var report = PruneReport()
        for id in try runs.prunableRuns(before: now - keep, limit: limit ?? Int(Int32.max)) {
            let removed = dryRun ? try runs.pruneCounts(runID: id) : try runs.prune(runID: id, at: now)
            if let removed { report.add(removed) }
        }
        if !dryRun, report.runs > 0 { report.sharedTexts = try runs.dropUnusedSharedTexts() }
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
                    checkpoints, audit_queue
                """)
            return nil
        }
    }
}
