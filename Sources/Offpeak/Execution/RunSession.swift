import Foundation
import Logging

/// One process's pass over a run, in the order of DESIGN.md's data flow: the run's due requests,
/// answered from the cache where it can, are packed into calls (the planner); each call passes the
/// gate (budget, stop, window, conditions), goes to the provider, and what came of it is committed
/// with the run's checkpoint (the store); then the outputs are written and the run is moved to
/// where the pass left it (the verdict).
struct RunSession {
    // The pass's four inputs, its stages in DESIGN.md's order (plan, admit, call, commit, audit;
    // the batch lane's collection works through `lanes` and `commits`) and its tally.
    /// What the pass works with; its provider and limiter are those of the fallback chain's route
    /// the pass sends to (`chooseRoute`).
    var context: RunContext
    let spec: JobSpec
    var run: RunRecord
    let options: JobRunner.Options
    var plan: PlanStage
    var admit: AdmitStage
    var lanes: CallLanes
    var commits = CommitStage()
    var audit = AuditPass()
    var tally = PassTally()
    /// The watch on the model's price windows, for a job that waits for cheaper prices.
    var prices: PriceWatch?
    /// The route of the fallback chain the pass sends to (`RunSession+Fallback`).
    var route = FallbackChain.Standing()
    /// The TTL of the pass's live calls' cached prefix (`PromptCacheTTL.forLive`).
    var liveCacheTTL: PromptCacheTTL?

    /// - Parameters:
    ///   - lanes: where the pass's calls go.
    ///   - holdCalls: why no call may start (the job's conditions do not hold), if none may.
    ///   - canceled: the user canceled the run: the pass only collects its provider batches.
    init(
        context: RunContext, spec: JobSpec, run: RunRecord, options: JobRunner.Options, lanes: LaneChoice,
        holdCalls: RunStop? = nil, canceled: Bool = false
    ) {
        self.context = context
        self.spec = spec
        self.run = run
        self.options = options
        plan = PlanStage(canceled: canceled)
        admit = AdmitStage(
            gate: CallGate(
                budget: spec.budget, constraints: spec.constraints, force: options.force,
                needsNetwork: !ConditionGate.isLocal(context.provider.baseURL), stop: options.stop,
                windowEnd: options.windowEnd, firstCallAlwaysStarts: options.firstCallAlwaysStarts),
            holdCalls: holdCalls)
        self.lanes = CallLanes(lanes)
    }

    /// What a failed call does to its items and to the run.
    var failures: FailurePolicy { FailurePolicy(maxAttempts: spec.maxAttempts) }

    mutating func execute() throws(OffpeakError) -> RunOutcome {
        var stop: RunStop?
        let calls = CallsInFlight()
        while true {
            // What the provider finished of the run's batches is booked first (whatever this pass's
            // lane: a deadline come close sends the rest live), so what it did not answer is
            // planned again below.
            if let api = lanes.batchAPI ?? context.provider.batches { try settleBatches(api) }
            if let hold = admit.holdCalls, try hasWorkLeft() { stop = hold }
            if stop == nil { stop = try callRounds(calls) }
            // `run --wait`: stay until the run's batches are collected, or one of them keeps
            // failing (its polls are the ticks' to go on with; the verdict says why).
            guard stop == nil, options.waitForBatches, let next = try nextBatchPoll(),
                try !context.store.batches.batches(runID: run.id).contains(where: \.isFailing)
            else { break }
            stop = waitUntil(next)
        }
        try readCommit()
        let written = try writeOutputs()
        return try finish(stop, written: written)
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
            if let down = try chooseRoute() { return down }
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
            if let api = lanes.batchAPI {
                stop = try submitBatches(planned, api: api)
                continue
            }
            plan.replanRound = false
            // A model whose batched answers just fared badly gets smaller prompts, or the
            // structured form: the rest of the round is planned again (`BatchFitness`).
            stop = try send(planned, in: calls) {
                $0.outdated($1) || $0.plan.replanRound || $0.betterRouteDue
            }
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
            while stop == nil, let done = calls.next(timeout: 0) { stop = try settle(done, calls) }
        }
        try calls.waitForAll { done throws(OffpeakError) in
            let ended = try settle(done, calls)
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
    func hasWorkLeft() throws(OffpeakError) -> Bool {
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
            // A call settled meanwhile found the round's route down: the call is planned again,
            // for the next route.
            if route.leaving { return nil }
            if calls.count > 0,
                try admit.awaitsMeasurement(
                    measured: context.latency(of: request.model, lane: lanes.direct) != nil)
            {
                if let done = calls.next(), let stop = try settle(done, calls) { return stop }
                continue
            }
            switch try context.limiter.admit(estimatedTokens: inputTokens + request.maxTokens, now: Date()) {
            case .go(let granted):
                ticket = granted
            case .waitForCall:
                if let done = calls.next(), let stop = try settle(done, calls) { return stop }
            case .wait(let until, let reason):
                if let stop = admit.limitStop(until: until, reason: reason) { return stop }
                let slice = min(0.5, max(0, until.timeIntervalSinceNow))
                if let done = calls.next(timeout: slice) {
                    if let stop = try settle(done, calls) { return stop }
                } else if calls.count == 0 {
                    Thread.sleep(forTimeInterval: slice)
                }
            }
        }
        guard let ticket else { return nil }
        // A commit on its way holds answers paid for and not yet kept: they hold their calls' places,
        // so a kill loses at most `in_flight` answered calls, and a pass of one call at a time judges
        // each call with all the one before it left (its lesson, its progress).
        if commits.sendingCalls > 0,
            context.limiter.inFlight + commits.sendingCalls > context.limiter.inFlightCap
        {
            do { try readCommit() } catch {
                context.limiter.withdraw(ticket)
                throw error
            }
        }
        // Answers settled while it waited for its slot changed its model's limits, or its route failed.
        if route.leaving || outdated(call) {
            context.limiter.withdraw(ticket)
            plan.replanRound = true
            return nil
        }
        let lane = lanes.direct
        let timeout = try context.timeout(for: request, inputTokens: inputTokens, lane: lane)
        // Reserved at the dearest prices the call may be billed at, up to its timeout (`http.timeout`
        // when it is not raised for the model).
        let sent = context.clock()
        let price = context.prices.cost(
            of: request.model, from: sent, to: sent + (timeout ?? context.callTimeout.floor))
        if let stop = try watchPrices(request, inputTokens: inputTokens, at: sent) {
            context.limiter.withdraw(ticket)
            return stop
        }
        // A live call's prefix keeps the provider's default TTL unless the job asks for one, its
        // schedule runs it again within the hour (`PromptCacheTTL.forLive`), or the pass's calls start
        // more than five minutes apart (`forPass`).
        var ttl = liveCacheTTL
        if ttl == nil, request.cacheSystemPrompt {
            ttl = PromptCacheTTL.forPass(
                request, inputTokens: inputTokens,
                latency: try context.latency(of: request.model, lane: lane),
                inFlight: context.limiter.inFlightCap)
        }
        if let refused = try checkGate(call, price: price, inFlight: calls.worst, lane: lane, cacheTTL: ttl) {
            context.limiter.withdraw(ticket)
            return refused
        }
        if admit.warnsUnpriced(request.model, price: price) {
            context.logger.warning(
                "no price known for model \(request.model); its calls are marked unpriced in costs and status"
            )
        }
        let worst = CallsInFlight.Worst(
            inputTokens: inputTokens, outputTokens: request.maxTokens,
            dollars: price?.worstDollars(
                for: request.worstUsage(inputTokens: inputTokens, ttl: ttl), lane: lane)
                ?? 0)
        let reserved = try reserve(
            worst, lost: try lostEntry(call, inputTokens: inputTokens, price: price, lane: lane),
            settling: calls)
        if let stop = reserved.stop {
            context.limiter.withdraw(ticket)
            return stop
        }
        tally.callsMade += 1
        calls.start(call, ticket: ticket, worst: worst, reservation: reserved.id, lane: lane) {
            [provider = context.provider, ttl] request in
            var request = request
            request.cacheTTL = ttl
            return provider.call(request, timeout: timeout, lane: lane)
        }
        return nil
    }

    /// Whether the call goes at the prices it would land in (`PriceWatch`): a pass whose cheap hours
    /// end stops, unless its deadline needs it to go on, which it says once.
    mutating func watchPrices(_ request: CompletionRequest, inputTokens: Int, at now: Date)
        throws(OffpeakError) -> RunStop?
    {
        guard var watch = prices else { return nil }
        defer { prices = watch }
        let call =
            try context.latency(of: request.model, lane: lanes.direct)?.expectedSeconds(
                input: inputTokens, maxOutput: request.maxTokens) ?? PriceWait.unmeasuredCall
        let left = Double(max(0, run.itemsTotal - run.itemsDone - run.itemsFailed))
        let work = PriceWait.work(items: Int(left), inFlight: context.limiter.inFlightCap, call: call)
        switch watch.check(now: now, lead: call, work: work) {
        case .go: return nil
        case .stop(let stop): return stop
        case .goesOn(let why):
            context.logger.info("job \(spec.name) \(why)")
            tally.notices.append("job \(spec.name) \(why)")
            return nil
        }
    }

    /// The ledger row `call` leaves if this process dies with it in flight (`LostCalls`): its input
    /// as estimated, and the model's typical answer on this lane as measured (its longest allowed
    /// while none is), marked estimated.
    func lostEntry(_ call: PlannedCall, inputTokens: Int, price: ModelPrice?, lane: CallLane)
        throws(OffpeakError) -> LedgerEntry
    {
        let request = call.request
        let typical = try context.latency(of: request.model, lane: lane).map {
            Int($0.outputTokens.rounded())
        }
        let usage = Usage(
            input: inputTokens, output: min(request.maxTokens, typical ?? request.maxTokens),
            searches: request.searchUses ?? 0)
        var entry = ledgerLine.answering(call.requests).entry(
            model: request.model, items: call.requests.count, usage: usage, usageEstimated: true,
            price: price,
            at: context.clock(), latency: 0, lane: lane)
        entry.audit = call.audit != nil
        return entry
    }

    /// The gate's decision for `call` (`AdmitStage.decide`), its worst case counted with those of
    /// the calls in flight (or the batches out); a budget that stops the run is recorded on it.
    /// - Parameter lane: the call's lane: its prices; a provider batch has no window to fit.
    /// - Parameter cacheTTL: how long the call's cacheable prefix may be kept: what writing it may
    ///   cost.
    mutating func checkGate(
        _ call: PlannedCall, price: ModelPrice?, inFlight: Spend, lane: CallLane, cacheTTL: PromptCacheTTL?
    ) throws(OffpeakError) -> RunStop? {
        let decision = try admit.decide(
            call.request, price: price, spent: try spentSoFar(batch: lane == .batch), inFlight: inFlight,
            lane: lane, cacheTTL: cacheTTL, callsMade: tally.callsMade, now: Date(),
            conditions: { [options] in options.gate?.read() },
            latency: { [context] model throws(OffpeakError) in try context.latency(of: model, lane: lane) })
        guard case .stop(let stop, let budget) = decision else { return nil }
        // The run's row is its lease holder's to write: a helper only stops.
        if let budget, context.lease.leased {
            try readCommit()
            run.budgetStop = budget.rawValue
            try context.store.runs.update(run: run)
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
}
