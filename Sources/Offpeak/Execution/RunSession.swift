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
        // Each round plans the due requests into calls; items a batched answer lost come back in the
        // next round in smaller batches, so every round makes progress and the loop ends.
        rounds: while stop == nil {
            let calls = try nextCalls()
            if calls.isEmpty {
                if try advanceReductions() { continue }  // a long document's next steps
                break
            }
            for call in calls {
                if let refused = try admit(call) {
                    stop = refused
                    break rounds
                }
                let receipt = try send(call)
                try commit(receipt)
                report()
                if let ended = receipt.stop {
                    stop = ended
                    break rounds
                }
            }
        }
        try writeOutputs()
        return try finish(stop)
    }

    /// The gate's decision for `call`; a budget that stops the run is recorded on it.
    private mutating func admit(_ call: PlannedCall) throws(OffpeakError) -> RunStop? {
        let request = call.request
        let store = context.store
        let decision = try gate.decide(
            CallGate.Call(
                model: request.model, price: context.prices.cost(of: request.model),
                inputTokens: TokenEstimator.inputTokens(request), maxOutputTokens: request.maxTokens),
            spent: try store.spend(runID: run.id), callsMade: callsMade, now: Date(),
            conditions: { [options] in options.gate?.read() },
            expectedSeconds: { () throws(OffpeakError) -> Double? in
                try store.latency(model: request.model)?.seconds(
                    input: TokenEstimator.inputTokens(request), maxOutput: request.maxTokens)
            })
        guard case .stop(let stop, let budget) = decision else { return nil }
        if let budget {
            run.budgetStop = budget.rawValue
            try store.update(run: run)
        }
        return stop
    }

    /// Makes one call; what came of it, answered or not, as a receipt to commit.
    private mutating func send(_ call: PlannedCall) throws(OffpeakError) -> CallReceipt {
        callsMade += 1
        let started = Date()
        let price = context.prices.cost(of: call.request.model)
        if price == nil, unpricedModels.insert(call.request.model).inserted {
            context.logger.warning(
                "no price known for model \(call.request.model); its calls are marked unpriced in costs and status"
            )
        }
        let response: CompletionResponse
        do {
            response = try context.provider.complete(call.request)
        } catch {
            let failed = ledgerLine.entry(
                model: call.request.model, items: call.requests.count, usage: Usage(input: 0, output: 0),
                usageEstimated: false, price: price, at: Date(), latency: Date().timeIntervalSince(started))
            return failure(error, call: call, ledger: failed)
        }
        FailureStreak().store(in: &run)  // an answer ends any streak of alike failures
        let receipt = CallReceipt.answered(
            call, response: response, price: price, line: ledgerLine, started: started, now: Date())
        if !receipt.retry.isEmpty {
            context.logger.info(
                "batched answer kept \(receipt.results.count) of \(call.requests.count) items; asking again")
        }
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

    /// Commits what one call left, with the run's counters and checkpoint, in one transaction; then
    /// keeps its new answers in the cache.
    private mutating func commit(_ receipt: CallReceipt) throws(OffpeakError) {
        try context.store.commitCall(
            run: run, ledger: receipt.ledger, results: receipt.results, retry: receipt.retry,
            failed: receipt.failed, later: receipt.later, lease: context.lease)
        answeredNow += receipt.itemsAnswered
        saveToCache(receipt.cacheEntries)
        run = try context.store.run(id: run.id) ?? run
    }

    /// The ledger's names for this run.
    var ledgerLine: LedgerLine {
        LedgerLine(
            job: spec.name, runID: run.id, provider: context.provider.kind, tier: run.tier,
            downgraded: run.downgraded)
    }

    private func report() {
        guard let progress = options.progress else { return }
        let dollars = (try? context.store.spend(runID: run.id).dollars) ?? 0
        progress(
            RunProgress(
                job: spec.name, done: run.itemsDone, failed: run.itemsFailed, total: run.itemsTotal,
                dollars: dollars))
    }

    /// Outputs are derived from the store, so they can always be written again.
    private func writeOutputs() throws(OffpeakError) {
        try OutputWriter(directory: context.outputs).write(
            job: spec.name, runID: run.id, requests: try context.store.requests(runID: run.id),
            results: try context.store.results(runID: run.id))
    }

    /// Moves the run to where this pass left it and says so.
    private mutating func finish(_ stop: RunStop?) throws(OffpeakError) -> RunOutcome {
        let store = context.store
        run = try store.run(id: run.id) ?? run  // counters as committed, before the state moves
        let retrying = try store.requests(runID: run.id, states: [.retrying])
        let waiting = try store.requests(runID: run.id, states: [.waiting])
        let next = retrying.min { ($0.nextAttemptAt ?? .distantPast) < ($1.nextAttemptAt ?? .distantPast) }
        let facts = RunVerdict.Facts(
            job: spec.name, itemsDone: run.itemsDone, itemsTotal: run.itemsTotal,
            itemsFailed: run.itemsFailed,
            answeredNow: answeredNow, nextRetry: next.map { ($0.error, retrying.count) },
            firstWaiting: waiting.first.map { ($0.error, waiting.count) },
            firstFailure: run.itemsFailed > 0
                ? try store.requests(runID: run.id, states: [.failed]).first?.error : nil,
            forcedPast: forcedPast, notices: notices)
        let verdict = RunVerdict.decide(facts, stop: stop)
        try store.move(&run, to: verdict.state, reason: verdict.reason)
        if !verdict.deferred.isEmpty, let stop {
            try store.deferJob(spec.name, run: run, reasons: stop.reason, at: Date())
        }
        return RunOutcome(
            run: run, status: verdict.status, message: verdict.message, spend: try store.spend(runID: run.id),
            outputDirectory: spec.output, answeredNow: answeredNow, callsMade: callsMade,
            deferred: verdict.deferred)
    }
}
