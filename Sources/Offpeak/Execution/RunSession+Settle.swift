import Foundation

/// The run's commit stage, as the pass meets it (DESIGN.md's data flow: call, then commit): a call
/// that came back is judged (its answer, or what its failure does to its items and run) and sent to
/// the store with the run's checkpoint (`CommitStage`), while the pass goes on.
extension RunSession {
    /// Commits a call that came back, with every other call of `calls` already back (group
    /// commit): answered calls go together in one transaction; a failed call is judged with all
    /// before it committed and read (the run's counts, its streak), and goes alone. The commit is
    /// sent and the pass goes on (`commits`); the one before it is read first.
    /// - Returns: why the pass stops, when a call says so.
    mutating func settle(_ done: CallsInFlight.Finished, _ calls: CallsInFlight) throws(OffpeakError)
        -> RunStop?
    {
        var ready = [done]
        while let more = calls.next(timeout: 0) { ready.append(more) }
        var group: [Answered] = []
        var stop: RunStop?
        for done in ready {
            context.limiter.finished(done.ticket, reply: done.reply, now: done.ended)
            if let target = done.call.audit {
                try settleAudit(done, target: target)
                continue
            }
            switch done.reply.answer {
            case .success(let response):
                let answered = try answered(done, response: response)
                stop = stop ?? answered.receipt.stop
                group.append(answered)
            case .failure(let error):
                try commit(group)  // the answers before it first: they are the run's counts it reads
                group = []
                let receipt = try failed(done, error: error)
                stop = stop ?? receipt.stop
                try commit([Answered(receipt: receipt, reservation: done.reservation)])
            }
        }
        try commit(group)
        return stop
    }

    /// A call's receipt, with what goes into its commit beside it.
    struct Answered {
        var receipt: CallReceipt
        var reservation: Int64?
        /// What a batched answer teaches about its model.
        var lesson: FitnessLesson?
        /// Its answers for the cache.
        var cache: CacheWrite?
        /// Audits of its batched answer, queued with it.
        var audits: [QueuedAudit] = []
    }

    /// What an answered call leaves.
    private mutating func answered(_ done: CallsInFlight.Finished, response: CompletionResponse)
        throws(OffpeakError) -> Answered
    {
        let call = done.call
        FailureStreak().store(in: &run)  // an answer ends any streak of alike failures
        let lane = done.lane.billed(asReported: response.serviceTier)
        if lane != done.lane {
            context.logger.info(
                "a \(done.lane.rawValue) call to \(call.request.model) was answered, and billed, as \(lane.rawValue)"
            )
        }
        var receipt = CallReceipt.answered(
            call, response: response,
            price: context.prices.cost(of: call.request.model, at: context.billedAt(done)),
            line: ledgerLine,
            started: done.started, now: done.ended, lane: lane)
        let cache = cacheWrite(receipt.cacheEntries)
        try readCommit()  // the model's record as the last commit left it
        let taught = receipt.batchedAnswer.map { lesson(from: $0, model: call.request.model) }
        let audits = try noteBatched(call, receipt: receipt)
        receipt.ledger?.at = context.clock()  // the day its spend counts in, as its reservation did
        return Answered(
            receipt: receipt, reservation: done.reservation, lesson: taught, cache: cache, audits: audits)
    }

    /// What a failed call leaves, judged with every call before it committed.
    private mutating func failed(_ done: CallsInFlight.Finished, error: any Error) throws(OffpeakError)
        -> CallReceipt
    {
        let call = done.call
        try readCommit()  // the run's counts as the last call left them
        let ledger = ledgerLine.answering(call.requests).entry(
            model: call.request.model, items: call.requests.count, usage: Usage(input: 0, output: 0),
            usageEstimated: false,
            price: context.prices.cost(of: call.request.model, at: context.billedAt(done)),
            at: done.ended,
            latency: done.ended.timeIntervalSince(done.started), lane: done.lane)
        var receipt: CallReceipt
        if refusedStructured(call, error: error) {
            var ledger = ledger
            ledger.failed = true
            receipt = CallReceipt(ledger: ledger)  // its items stay pending, to go without the form
        } else if done.lane == .flex, FlexProcessing.isCapacityRefusal(error) {
            let refused = lanes.flexRefused(
                call, ledger: ledger, error: error, job: spec.name, deadline: run.deadlineAt, now: Date())
            if let news = refused.news { context.logger.info("\(news)") }
            receipt = refused.receipt
        } else if let error = error as? ProviderError,
            let fellBack = try fallBack(error, done, ledger: ledger)
        {
            receipt = fellBack
        } else {
            receipt = failure(error, call: call, ledger: ledger)
        }
        receipt.ledger?.at = context.clock()  // the day its spend counts in, as its reservation did
        return receipt
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

    /// Sends what calls left, with the run's counters and checkpoint, what their batched answers
    /// taught about their models and their new answers for the cache, in one transaction
    /// (`RunStore.startCommit`), once the commit before it is read. Lessons about one model are
    /// made as one change, in order: the store changes each record once a commit.
    private mutating func commit(_ group: [Answered]) throws(OffpeakError) {
        guard !group.isEmpty else { return }
        try readCommit()
        var commits: [CallCommit] = []
        var changing: [String: Int] = [:]  // the call whose commit changes each model's record
        for answered in group {
            let receipt = answered.receipt
            var commit = CallCommit(
                run: run, ledger: receipt.ledger, results: receipt.results, retry: receipt.retry,
                failed: receipt.failed, later: receipt.later, postponed: receipt.postponed,
                lease: context.lease, reservation: answered.reservation, cache: answered.cache,
                audits: answered.audits)
            if let change = answered.lesson?.change {
                if let first = changing[change.model], let before = commits[first].fitness {
                    commits[first].fitness = FitnessChange(
                        provider: before.provider, model: before.model, at: change.at
                    ) {
                        before.change(&$0)
                        change.change(&$0)
                    }
                } else {
                    changing[change.model] = commits.count
                    commit.fitness = change
                }
            }
            commits.append(commit)
        }
        let pending = try context.store.runs.startCommit(commits)
        try self.commits.sent(
            pending, ledgers: group.compactMap(\.receipt.ledger), lessons: group.compactMap(\.lesson),
            calls: group.count)
        let answered = group.reduce(0) { $0 + $1.receipt.itemsAnswered }
        tally.answeredNow += answered
        if let chain = context.chain, route.current > 0 {
            tally.fellBack.add(answered, by: chain.routes[route.current].name)
        }
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
        // One model's lessons of one commit were one change: said once, from the first's limit.
        var said: Set<String> = []
        for lesson in read.lessons where said.insert(lesson.change.model).inserted {
            if let after = committed.fitness[lesson.change.model] { learned(lesson, after: after) }
        }
        report(spent: committed.spend)
    }

    /// The ledger's names for this run.
    var ledgerLine: LedgerLine {
        var line = LedgerLine(
            job: spec.name, runID: run.id, provider: context.provider.kind, tier: run.tier,
            downgraded: run.downgraded, host: context.host, tags: Tags.stored(spec.tags ?? []))
        if let waited = prices?.waited {
            let table = context.prices
            line.pricesWhenWaiting = { @Sendable model in
                table.cost(of: model, from: waited.start, to: waited.end)
            }
        }
        return line
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
