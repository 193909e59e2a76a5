import Foundation

/// The pass's last step (DESIGN.md's data flow: outputs and reports): the outputs written from the
/// store, and the run moved to where the pass left it.
extension RunSession {
    /// Outputs are derived from the store, so they can always be written again; they are read a
    /// request outline and an answer at a time, so a run of any size fits in memory.
    /// - Returns: what was written, and what the answers were (those cut off).
    func writeOutputs() throws(OffpeakError) -> OutputWriter.Written {
        let store = context.store
        let items = try store.runs.outlines(runID: run.id)
        return try OutputWriter(directory: context.outputs).write(
            job: spec.name, runID: run.id, items: items, notes: try ItemNotes.of(run, store: store),
            earlier: try OutputWriter.earlier(run, items: items, store: store)
        ) { visit throws(OffpeakError) in
            try store.runs.forEachResult(runID: run.id) { try visit($0) }
        }
    }

    /// Moves the run to where this pass left it and says so.
    /// - Parameter written: the outputs as `writeOutputs` found them.
    mutating func finish(_ stop: RunStop?, written: OutputWriter.Written) throws(OffpeakError) -> RunOutcome {
        let store = context.store
        run = try store.runs.run(id: run.id) ?? run  // counters as committed, before the state moves
        let retrying = try store.runs.summary(runID: run.id, state: .retrying)
        let waiting = try store.runs.summary(runID: run.id, state: .waiting)
        var facts = RunVerdict.Facts(
            job: spec.name, itemsDone: run.itemsDone, itemsTotal: run.itemsTotal,
            itemsFailed: run.itemsFailed,
            answeredNow: tally.answeredNow, nextRetry: retrying.first.map { ($0.error, retrying.count) },
            firstWaiting: waiting.first.map { ($0.error, waiting.count) },
            firstFailure: run.itemsFailed > 0
                ? try store.runs.summary(runID: run.id, state: .failed).first?.error : nil,
            forcedPast: tally.forcedPast, notices: tally.notices)
        facts.pending = try store.runs.summary(runID: run.id, state: .pending).count
        facts.inBatch = try store.runs.summary(runID: run.id, state: .inBatch).count
        if facts.inBatch > 0, let failing = try store.batches.batches(runID: run.id).first(where: \.isFailing)
        {
            facts.failingBatch = (failing.pollFailures, failing.pollError ?? "unknown")
        }
        facts.submittedNow = tally.submittedNow
        facts.canceled = plan.canceled
        facts.audit = try auditClause()
        facts.fallbacks = tally.fellBack.clause
        let skipped = try store.runs.summary(runID: run.id, state: .skipped)
        if skipped.count > 0 { facts.skipped = (skipped.count, skipped.first?.error ?? "unknown") }
        if let tokens = written.firstCutOffTokens {
            facts.cutOff = (written.cutOff, CallReceipt.cutOffReason(received: tokens, limit: spec.maxTokens))
        }
        let verdict = RunVerdict.decide(facts, stop: stop)
        try store.move(&run, to: verdict.state, reason: verdict.reason)
        if !verdict.deferred.isEmpty, let stop {
            try store.schedules.deferJob(
                spec.name, run: run, reasons: stop.reason, host: context.host, at: context.clock())
        }
        return RunOutcome(
            run: run, status: verdict.status, message: verdict.message,
            spend: try store.ledger.spend(runID: run.id),
            outputDirectory: spec.output, answeredNow: tally.answeredNow, callsMade: tally.callsMade,
            deferred: verdict.deferred)
    }
}
