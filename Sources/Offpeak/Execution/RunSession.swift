import Foundation
import Logging

/// One process's pass over a run, in the order of DESIGN.md's data flow: the run's due requests,
/// answered from the cache where it can, are packed into calls (the planner); each call passes the
/// gate (budget, stop, window, conditions), goes to the provider, and what came of it is committed
/// with the run's checkpoint (the store); then the outputs are written and the run is moved to
/// where the pass left it (the verdict).
struct RunSession {
    let context: RunContext
    let spec: JobSpec
    var run: RunRecord
    let options: JobRunner.Options
    let gate: CallGate
    let failures: FailurePolicy
    /// Items (not steps) answered by this pass.
    var answeredNow = 0
    /// Calls this pass has started.
    var callsMade = 0
    /// Conditions that did not hold when `run --force` started the run.
    var forcedPast: [ConditionGate.Reason] = []
    /// What the user should read before the outcome (a changed spec's dropped items).
    var notices: [String] = []
    /// Models already warned about as having no price.
    var unpricedModels: Set<String> = []
    /// The provider's batch API when the pass sends its calls through the batch lane; nil: they go
    /// straight to the provider, in `callLane`.
    var batchAPI: (any BatchAPI)?
    /// How the pass's calls that go straight to the provider go: `live`, or `flex` (`FlexLane`),
    /// until a refusal near the deadline sends the rest live.
    var callLane = CallLane.live
    /// Flex calls this pass saw refused for capacity (`flexRefused`).
    var flexRefusals = 0
    /// Items this pass put in provider batches.
    var submittedNow = 0
    /// The user canceled the run (`offpeak cancel`): the pass only collects its provider batches.
    var canceled = false
    /// Why no call may start (the job's conditions do not hold): the pass books what its provider
    /// batches answered, then stops with this if work is left.
    var holdCalls: RunStop?
    /// Answers that came back changed how the round's model should be asked (`outdated`): the
    /// round's calls not started yet are planned again.
    var replanRound = false
    /// The batch fitness records this pass has read or written lately (`fitness(of:)`).
    let fitnessReads = RecentReads<BatchFitness>()
    /// The audit records this pass has read or written lately (`auditRecord(of:)`).
    let auditReads = RecentReads<AuditRecord>()
    /// What the batch audit did in this pass (`AuditPass`).
    var audit = AuditPass()
    /// The calls' commits (`CommitStage`): the last one on its way, and the run's spend they left.
    var commits = CommitStage()

    init(context: RunContext, spec: JobSpec, run: RunRecord, options: JobRunner.Options) {
        self.context = context
        self.spec = spec
        self.run = run
        self.options = options
        gate = CallGate(
            budget: spec.budget, constraints: spec.constraints, force: options.force,
            needsNetwork: !ConditionGate.isLocal(context.provider.baseURL), stop: options.stop,
            windowEnd: options.windowEnd, firstCallAlwaysStarts: options.firstCallAlwaysStarts)
        failures = FailurePolicy(maxAttempts: spec.maxAttempts)
    }

    mutating func execute() throws(OffpeakError) -> RunOutcome {
        var stop: RunStop?
        let calls = CallsInFlight()
        while true {
            // What the provider finished of the run's batches is booked first (whatever this pass's
            // lane: a deadline come close sends the rest live), so what it did not answer is
            // planned again below.
            if let api = batchAPI ?? context.provider.batches { try settleBatches(api) }
            if let hold = holdCalls, try hasWorkLeft() { stop = hold }
            if stop == nil { stop = try callRounds(calls) }
            // `run --wait`: stay until the run's batches are collected, or one of them keeps
            // failing (its polls are the ticks' to go on with; the verdict says why).
            guard stop == nil, options.waitForBatches, let next = try nextBatchPoll(),
                try !context.store.batches.batches(runID: run.id).contains(where: \.isFailing)
            else { break }
            stop = waitUntil(next)
        }
        try readCommit()
        try writeOutputs()
        return try finish(stop)
    }

    /// A helper's pass (`JobRunner.help`): the rounds of the run's requests it claims, until none
    /// is left to it or it stops. The run's state, its provider batches, its long documents' steps
    /// and its outputs stay the lease holder's.
    /// - Returns: why the pass stopped, if it did.
    mutating func help() throws(OffpeakError) -> RunStop? {
        let stop = try callRounds(CallsInFlight())
        try readCommit()
        return stop
    }

    /// Rounds of calls until the run has nothing due that this pass may claim, or the pass stops.
    ///
    /// Each round plans the due requests into calls and keeps as many in flight as the provider
    /// allows (or puts them in provider batches); every call of a round comes back and is committed
    /// before the next round is planned, so items a batched answer lost, and a long document's next
    /// steps, are decided from what is committed. Every round makes progress, so the loop ends.
    /// The pass holding the run's lease stays while other processes answer rounds they claimed
    /// (helpers, `JobRunner.help`): what they leave due is its to send, and the run is done only
    /// when they are.
    /// - Returns: why the pass stops, if it does.
    mutating func callRounds(_ calls: CallsInFlight) throws(OffpeakError) -> RunStop? {
        var stop: RunStop?
        while stop == nil {
            let planned = try nextCalls()
            if planned.isEmpty {
                // A stop asked for while the cache answered round after round.
                if let signal = options.stop, signal.isRequested, try hasWorkLeft() {
                    return .signal(signal.reason)
                }
                // Audits an earlier pass queued and was stopped before making: they may ask
                // answers again.
                if !audit.queue.isEmpty {
                    stop = try auditRound(calls)
                    continue
                }
                guard context.lease.leased else { break }
                if try advanceReductions() { continue }  // a long document's next steps
                if try advanceDigest() { continue }  // the run's digest, once its items are settled
                if try othersAtWork() {
                    try renewLease()  // no commit of its own renews it meanwhile
                    // The shared limits' slots its calls gave back go to the helpers now, not at
                    // this pass's next call.
                    try context.limiter.flush(now: Date())
                    stop = waitUntil(Date() + Self.helpersPoll)
                    continue
                }
                break
            }
            if let api = batchAPI {
                stop = try submitBatches(planned, api: api)
                continue
            }
            replanRound = false
            // A model whose batched answers just fared badly gets smaller prompts, or the
            // structured form: the rest of the round is planned again (`BatchFitness`).
            stop = try send(planned, in: calls) { $0.outdated($1) || $0.replanRound }
            try readCommit()
            // Some of the round's batched items asked again alone (`RunSession+Audit`).
            if stop == nil { stop = try auditRound(calls) }
        }
        return stop
    }

    /// Starts `planned` in order, committing calls as they come back, until one starts nothing more
    /// (`halt` says so before it, or the pass stops), then commits every call still out.
    /// - Returns: why the pass stops, if it does.
    mutating func send(
        _ planned: [PlannedCall], in calls: CallsInFlight,
        halt: (RunSession, PlannedCall) -> Bool = { _, _ in false }
    ) throws(OffpeakError) -> RunStop? {
        var stop: RunStop?
        for call in planned where stop == nil {
            if halt(self, call) { break }
            stop = try start(call, in: calls)
            while stop == nil, let done = calls.next(timeout: 0) { stop = try settle(done) }
        }
        try calls.waitForAll { done throws(OffpeakError) in
            let ended = try settle(done)
            stop = stop ?? ended
        }
        return stop
    }

    /// How often the lease holder looks again while helpers answer the run's last rounds.
    static let helpersPoll: TimeInterval = 0.2

    /// Whether other processes hold live claims on rounds of the run: they are answering them.
    private func othersAtWork() throws(OffpeakError) -> Bool {
        try !context.store.leases.liveClaims(runID: run.id, except: context.lease.owner, now: Date()).isEmpty
    }

    /// Extends this pass's lease on the run while it waits for helpers: refused (`LeaseLost`) if
    /// another process took it over meanwhile.
    private func renewLease() throws(OffpeakError) {
        let hold = context.lease
        if let holder = try context.store.leases.acquireLease(
            runID: run.id, owner: hold.owner, host: context.host, ttl: hold.ttl)
        {
            throw LeaseLost.error(runID: run.id, holder: holder)
        }
    }

    /// Whether requests are left to send (pending or retrying).
    private func hasWorkLeft() throws(OffpeakError) -> Bool {
        let store = context.store
        return try store.runs.summary(runID: run.id, state: .pending).count
            + store.runs.summary(runID: run.id, state: .retrying).count > 0
    }

    /// Sleeps until `date`, waking at once for a stop signal.
    /// - Returns: the stop, if one was asked for.
    private func waitUntil(_ date: Date) -> RunStop? {
        while Date() < date {
            if let stop = options.stop, stop.isRequested { return .signal(stop.reason) }
            Thread.sleep(forTimeInterval: min(0.25, max(0, date.timeIntervalSinceNow)))
        }
        return nil
    }

    /// Starts `call` once the provider's limits give it a slot and the gate lets it go, committing
    /// calls that come back meanwhile.
    /// - Returns: why the pass stops instead, if it does.
    mutating func start(_ call: PlannedCall, in calls: CallsInFlight) throws(OffpeakError) -> RunStop? {
        let request = call.request
        let inputTokens = TokenEstimator.inputTokens(request)
        var ticket: CallLimiter.CallTicket?
        while ticket == nil {
            if let stop = options.stop, stop.isRequested { return .signal(stop.reason) }
            if calls.count > 0, try awaitsMeasurement(of: request.model) {
                if let done = calls.next(), let stop = try settle(done) { return stop }
                continue
            }
            switch try context.limiter.admit(estimatedTokens: inputTokens + request.maxTokens, now: Date()) {
            case .go(let granted):
                ticket = granted
            case .waitForCall:
                if let done = calls.next(), let stop = try settle(done) { return stop }
            case .wait(let until, let reason):
                if let end = options.windowEnd, until > end {
                    return RunStop(
                        state: .interrupted,
                        reason: "the provider's limit (\(reason.rawValue)) holds the next call until "
                            + "\(Timestamp.text(until)), after the window",
                        status: .temporaryFailure)
                }
                let slice = min(0.5, max(0, until.timeIntervalSinceNow))
                if let done = calls.next(timeout: slice) {
                    if let stop = try settle(done) { return stop }
                } else if calls.count == 0 {
                    Thread.sleep(forTimeInterval: slice)
                }
            }
        }
        guard let ticket else { return nil }
        // A commit on its way is an answer paid for and not yet kept: it holds its call's place, so
        // a kill loses at most `in_flight` answered calls, and a pass of one call at a time judges
        // each call with all the one before it left (its lesson, its progress).
        if commits.isSending, context.limiter.inFlight >= context.limiter.inFlightCap {
            do { try readCommit() } catch {
                context.limiter.withdraw(ticket)
                throw error
            }
        }
        if outdated(call) {  // answers settled while it waited for its slot changed its model's limits
            context.limiter.withdraw(ticket)
            replanRound = true
            return nil
        }
        let price = context.prices.cost(of: request.model)
        let lane = callLane
        if let refused = try admit(call, price: price, inFlight: calls.worst, lane: lane) {
            context.limiter.withdraw(ticket)
            return refused
        }
        if price == nil, unpricedModels.insert(request.model).inserted {
            context.logger.warning(
                "no price known for model \(request.model); its calls are marked unpriced in costs and status"
            )
        }
        let worst = CallsInFlight.Worst(
            inputTokens: inputTokens, outputTokens: request.maxTokens,
            dollars: price?.dollars(for: request.worstUsage(inputTokens: inputTokens), lane: lane) ?? 0)
        let reserved = try reserve(worst, settling: calls)
        if let stop = reserved.stop {
            context.limiter.withdraw(ticket)
            return stop
        }
        callsMade += 1
        let timeout = try context.timeout(for: request, inputTokens: inputTokens, lane: lane)
        calls.start(call, ticket: ticket, worst: worst, reservation: reserved.id, lane: lane) {
            [provider = context.provider] in
            provider.call($0, timeout: timeout, lane: lane)
        }
        return nil
    }

    /// Whether calls to `model` go one at a time until an answer measures how long one takes: the
    /// window planner needs that time to tell whether a call fits, and the store has none yet.
    private func awaitsMeasurement(of model: String) throws(OffpeakError) -> Bool {
        guard options.windowEnd != nil else { return false }
        return try context.latency(of: model) == nil
    }

    /// The gate's decision for `call`, its worst case counted with those of the calls in flight (or
    /// the batches out); a budget that stops the run is recorded on it.
    /// - Parameter lane: the call's lane: its prices; a provider batch has no window to fit.
    mutating func admit(_ call: PlannedCall, price: ModelPrice?, inFlight: Spend, lane: CallLane)
        throws(OffpeakError) -> RunStop?
    {
        let request = call.request
        let store = context.store
        let batch = lane == .batch
        var spent = try spentSoFar(batch: batch)
        spent.calls += inFlight.calls
        spent.inputTokens += inFlight.inputTokens
        spent.outputTokens += inFlight.outputTokens
        spent.dollars += inFlight.dollars
        let decision = try gate.decide(
            CallGate.Call(
                model: request.model, price: price, inputTokens: TokenEstimator.inputTokens(request),
                maxOutputTokens: request.maxTokens, lane: lane, searches: request.searchUses ?? 0),
            spent: spent, callsMade: callsMade, now: Date(),
            conditions: { [options] in options.gate?.read() },
            expectedSeconds: { () throws(OffpeakError) -> Double? in
                // Creating a batch takes one short exchange, whatever the batch will take.
                if batch { return 0 }
                return try context.latency(of: request.model)?.expectedSeconds(
                    input: TokenEstimator.inputTokens(request), maxOutput: request.maxTokens)
            })
        guard case .stop(let stop, let budget) = decision else { return nil }
        // The run's row is its lease holder's to write: a helper only stops.
        if let budget, context.lease.leased {
            try readCommit()
            run.budgetStop = budget.rawValue
            try store.runs.update(run: run)
        }
        return stop
    }

    /// The run's spend so far, the commit on its way included: kept from this pass's commits (each
    /// reads it back, and adds its own ledger row at once), read from the store when not known, and
    /// always for a provider batch's requests.
    mutating func spentSoFar(batch: Bool) throws(OffpeakError) -> Spend {
        if !batch, let known = commits.knownSpend { return known }
        let spent = try context.store.ledger.spend(runID: run.id)
        if !batch { commits.know(spent) }
        return spent
    }

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
                receipt = flexRefused(call, ledger: ledger, error: error)
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
        answeredNow += receipt.itemsAnswered
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

    /// Outputs are derived from the store, so they can always be written again; they are read a
    /// request outline and an answer at a time, so a run of any size fits in memory.
    private func writeOutputs() throws(OffpeakError) {
        let store = context.store
        try OutputWriter(directory: context.outputs).write(
            job: spec.name, runID: run.id, items: try store.runs.outlines(runID: run.id),
            notes: try ItemNotes.of(run, store: store)
        ) { visit throws(OffpeakError) in
            try store.runs.forEachResult(runID: run.id) { try visit($0) }
        }
    }

    /// Moves the run to where this pass left it and says so.
    private mutating func finish(_ stop: RunStop?) throws(OffpeakError) -> RunOutcome {
        let store = context.store
        run = try store.runs.run(id: run.id) ?? run  // counters as committed, before the state moves
        let retrying = try store.runs.summary(runID: run.id, state: .retrying)
        let waiting = try store.runs.summary(runID: run.id, state: .waiting)
        var facts = RunVerdict.Facts(
            job: spec.name, itemsDone: run.itemsDone, itemsTotal: run.itemsTotal,
            itemsFailed: run.itemsFailed,
            answeredNow: answeredNow, nextRetry: retrying.first.map { ($0.error, retrying.count) },
            firstWaiting: waiting.first.map { ($0.error, waiting.count) },
            firstFailure: run.itemsFailed > 0
                ? try store.runs.summary(runID: run.id, state: .failed).first?.error : nil,
            forcedPast: forcedPast, notices: notices)
        facts.pending = try store.runs.summary(runID: run.id, state: .pending).count
        facts.inBatch = try store.runs.summary(runID: run.id, state: .inBatch).count
        if facts.inBatch > 0, let failing = try store.batches.batches(runID: run.id).first(where: \.isFailing)
        {
            facts.failingBatch = (failing.pollFailures, failing.pollError ?? "unknown")
        }
        facts.submittedNow = submittedNow
        facts.canceled = canceled
        facts.audit = try auditClause()
        let verdict = RunVerdict.decide(facts, stop: stop)
        try store.move(&run, to: verdict.state, reason: verdict.reason)
        if !verdict.deferred.isEmpty, let stop {
            try store.schedules.deferJob(
                spec.name, run: run, reasons: stop.reason, host: context.host, at: Date())
        }
        return RunOutcome(
            run: run, status: verdict.status, message: verdict.message,
            spend: try store.ledger.spend(runID: run.id),
            outputDirectory: spec.output, answeredNow: answeredNow, callsMade: callsMade,
            deferred: verdict.deferred)
    }
}
