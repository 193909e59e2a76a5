import Foundation

/// The run's commit stage, as the pass meets it (DESIGN.md's data flow: call, then commit): a call
/// that came back is judged (its answer, or what its failure does to its items and run) and sent to
/// the store with the run's checkpoint (`CommitStage`), while the pass goes on.
extension RunSession {
    /// Commits a call that came back: its answer, or what its failure does to its items and run.
    /// The commit is sent and the pass goes on (`commits`); the one before it is read first.
    /// - Returns: why the pass stops, when the call says so.
    mutating func settle(_ done: CallsInFlight.Finished) throws(OffpeakError) -> RunStop? {
        context.limiter.finished(done.ticket, reply: done.reply, now: done.ended)
        if let target = done.call.audit {
            try settleAudit(done, target: target)
            return nil
        }
        let call = done.call
        let price = context.prices.cost(of: call.request.model)
        var receipt: CallReceipt
        var taught: FitnessLesson?  // what a batched answer teaches, committed with it
        var cache: CacheWrite?  // its answers for the cache
        var queued: [QueuedAudit] = []  // audits of its batched answer, queued with it
        switch done.reply.answer {
        case .success(let response):
            FailureStreak().store(in: &run)  // an answer ends any streak of alike failures
            receipt = CallReceipt.answered(
                call, response: response, price: price, line: ledgerLine, started: done.started,
                now: done.ended, lane: done.lane)
            cache = cacheWrite(receipt.cacheEntries)
            try readCommit()  // the model's record as the last answer left it
            taught = receipt.batchedAnswer.map { lesson(from: $0, model: call.request.model) }
            queued = try noteBatched(call, receipt: receipt)
        case .failure(let error):
            try readCommit()  // the run's counts as the last call left them
            let ledger = ledgerLine.entry(
                model: call.request.model, items: call.requests.count, usage: Usage(input: 0, output: 0),
                usageEstimated: false, price: price, at: done.ended,
                latency: done.ended.timeIntervalSince(done.started), lane: done.lane)
            if refusedStructured(call, error: error) {
                var ledger = ledger
                ledger.failed = true
                receipt = CallReceipt(ledger: ledger)  // its items stay pending, to go without the form
            } else if done.lane == .flex, FlexProcessing.isCapacityRefusal(error) {
                let refused = lanes.flexRefused(
                    call, ledger: ledger, error: error, job: spec.name, deadline: run.deadlineAt, now: Date())
                if let news = refused.news { context.logger.info("\(news)") }
                receipt = refused.receipt
            } else {
                receipt = failure(error, call: call, ledger: ledger)
            }
        }
        receipt.ledger?.at = context.clock()  // the day its spend counts in, as its reservation did
        try commit(receipt, releasing: done.reservation, lesson: taught, cache: cache, audits: queued)
        return receipt.stop
    }

    /// What a failed call leaves: a provider's error goes by the failure policy; anything else
    /// fails the call's items.
    private mutating func failure(_ error: any Error, call: PlannedCall, ledger: LedgerEntry) -> CallReceipt {
        var ledger = ledger
        ledger.failed = true
        guard let error = error as? ProviderError else {
            return CallReceipt(ledger: ledger, failed: call.requests.map { ($0.id, "\(error)") })
        }
        var streak = FailureStreak(run: run)
        let receipt = failures.receipt(
            for: error, call: call, ledger: ledger, streak: &streak,
            unanswered: max(0, run.itemsTotal - run.itemsDone - run.itemsFailed), stop: options.stop,
            now: Date())
        streak.store(in: &run)
        return receipt
    }

    /// Sends what one call left, with the run's counters and checkpoint, what its batched answer
    /// taught about the model and its new answers for the cache, in one transaction
    /// (`RunStore.startCommit`), once the commit before it is read.
    private mutating func commit(
        _ receipt: CallReceipt, releasing reservation: Int64?, lesson: FitnessLesson?, cache: CacheWrite?,
        audits: [QueuedAudit]
    ) throws(OffpeakError) {
        try readCommit()
        let pending = try context.store.runs.startCommit(
            CallCommit(
                run: run, ledger: receipt.ledger, results: receipt.results, retry: receipt.retry,
                failed: receipt.failed, later: receipt.later, postponed: receipt.postponed,
                lease: context.lease, reservation: reservation, fitness: lesson?.change, cache: cache,
                audits: audits))
        try commits.sent(pending, ledger: receipt.ledger, lesson: lesson)
        tally.answeredNow += receipt.itemsAnswered
    }

    /// Reads what the commit on its way left: the run's counters, its spend, the model's record as
    /// its batched answer left it, and the cache's evictions. A commit that failed is thrown here
    /// (nothing of its call was committed).
    mutating func readCommit() throws(OffpeakError) {
        guard let read = try commits.read() else { return }
        let committed = read.committed
        context.cache.evicted(committed.evicted)
        run.itemsDone = committed.run.itemsDone
        run.itemsFailed = committed.run.itemsFailed
        run.itemsCached = committed.run.itemsCached
        if let lesson = read.lesson, let after = committed.fitness { learned(lesson, after: after) }
        report(spent: committed.spend)
    }

    /// The ledger's names for this run.
    var ledgerLine: LedgerLine {
        LedgerLine(
            job: spec.name, runID: run.id, provider: context.provider.kind, tier: run.tier,
            downgraded: run.downgraded, host: context.host)
    }

    private func report(spent: Spend) {
        guard let progress = options.progress else { return }
        let dollars = spent.dollars
        progress(
            RunProgress(
                job: spec.name, done: run.itemsDone, failed: run.itemsFailed, total: run.itemsTotal,
                dollars: dollars))
    }
}
