import Foundation
import Logging

/// One process's pass over a run: sends its pending requests in order until they are done or
/// something stops it (a budget, the provider going away), then writes the outputs.
struct RunSession {
    let runner: JobRunner
    let spec: JobSpec
    var run: RunRecord
    let options: JobRunner.Options
    private var answeredNow = 0
    private var unpricedModels: Set<String> = []

    /// Why the pass ended early.
    private struct Stop {
        var state: RunState
        var reason: String
        var status: ExitStatus
    }

    init(runner: JobRunner, spec: JobSpec, run: RunRecord, options: JobRunner.Options) {
        self.runner = runner
        self.spec = spec
        self.run = run
        self.options = options
    }

    mutating func execute() throws(OffpeakError) -> RunOutcome {
        let store = runner.store
        var stop: Stop?
        for request in try store.requests(runID: run.id, states: [.pending, .retrying]) {
            stop = try send(request)
            run = try store.run(id: run.id) ?? run
            report()
            if stop != nil { break }
        }
        let writer = OutputWriter(directory: runner.workspace.url(for: spec.output))
        try writer.write(
            job: spec.name, runID: run.id, requests: try store.requests(runID: run.id),
            results: try store.results(runID: run.id))
        return try finish(stop)
    }

    /// Sends one request and commits what came of it.
    /// - Returns: a `Stop` when the run cannot go on now.
    private mutating func send(_ record: RequestRecord) throws(OffpeakError) -> Stop? {
        let store = runner.store
        let request: CompletionRequest
        do { request = try record.completionRequest() } catch {
            try store.commitFailure(
                run: run, requestID: record.id, error: "stored request unreadable: \(error)", ledger: nil, segment: 0)
            return nil
        }
        let price = runner.prices.price(for: request.model)
        let estimate = TokenEstimator.inputTokens(request)
        let worst = price?.dollars(for: Usage(input: estimate, output: request.maxTokens), batch: false)
        if let over = BudgetGuard(budget: spec.budget).check(
            spent: try store.spend(runID: run.id), inputTokens: estimate, maxOutputTokens: request.maxTokens,
            worstDollars: worst)
        {
            run.budgetStop = over.limit.rawValue
            try store.update(run: run)
            return Stop(state: .interrupted, reason: "stopped by budget \(over.message)", status: .temporaryFailure)
        }
        let started = Date()
        do {
            let response = try runner.provider.complete(request)
            let ledger = ledgerEntry(for: response, request: request, price: price, started: started)
            if response.finishReason == .length {
                let why = "answer cut off at max_tokens (\(request.maxTokens)); raise max_tokens in the spec"
                try store.commitFailure(run: run, requestID: record.id, error: why, ledger: ledger, segment: 0)
            } else {
                let result = ResultRecord(
                    requestId: record.id, runId: run.id, text: response.text,
                    finishReason: response.finishReason.rawValue, model: response.model, fromCache: false,
                    ledgerId: nil, inputTokens: response.usage.totalInput, outputTokens: response.usage.output,
                    dollars: ledger.dollars, createdAt: ledger.at)
                try store.commitAnswer(run: run, ledger: ledger, results: [result], segment: 0)
                answeredNow += 1
            }
            try store.renewLease(runID: run.id, owner: runner.owner, ttl: runner.leaseTTL)
            return nil
        } catch let error as ProviderError {
            return try handle(error, record: record)
        } catch {
            try store.commitFailure(run: run, requestID: record.id, error: "\(error)", ledger: nil, segment: 0)
            return nil
        }
    }

    /// A provider failure either stops the run (down, or refusing the account) or fails the item.
    private func handle(_ error: ProviderError, record: RequestRecord) throws(OffpeakError) -> Stop? {
        if error.isTransient {
            return Stop(state: .interrupted, reason: error.description, status: .temporaryFailure)
        }
        if error.stopsTheRun {
            let status: ExitStatus
            switch error {
            case .http(let code, _) where code == 401 || code == 403: status = .configuration
            case .missingKey: status = .configuration
            default: status = .unavailable
            }
            return Stop(state: .failed, reason: error.description, status: status)
        }
        try runner.store.commitFailure(
            run: run, requestID: record.id, error: error.description, ledger: nil, segment: 0)
        return nil
    }

    private mutating func ledgerEntry(
        for response: CompletionResponse, request: CompletionRequest, price: ModelPrice?, started: Date
    ) -> LedgerEntry {
        if price == nil, unpricedModels.insert(request.model).inserted {
            runner.logger.warning("no price known for model \(request.model); its calls are recorded at $0")
        }
        let now = Date()
        return LedgerEntry(
            id: nil, at: now, job: spec.name, runId: run.id, provider: runner.provider.kind.rawValue,
            model: request.model, tier: run.tier, downgraded: run.downgraded, items: 1,
            inputTokens: response.usage.input, outputTokens: response.usage.output,
            cacheReadTokens: response.usage.cacheRead, cacheWriteTokens: response.usage.cacheWrite,
            dollars: price?.dollars(for: response.usage, batch: false) ?? 0,
            naiveDollars: price?.naiveDollars(for: response.usage) ?? 0, batchApi: false, cacheHit: false,
            usageEstimated: response.usageEstimated, latencyMs: Int(now.timeIntervalSince(started) * 1000))
    }

    private func report() {
        guard let progress = options.progress else { return }
        let dollars = (try? runner.store.spend(runID: run.id).dollars) ?? 0
        progress(
            RunProgress(
                job: spec.name, done: run.itemsDone, failed: run.itemsFailed, total: run.itemsTotal, dollars: dollars))
    }

    /// Moves the run to where this pass left it and says so.
    private mutating func finish(_ stop: Stop?) throws(OffpeakError) -> RunOutcome {
        let spend = try runner.store.spend(runID: run.id)
        let status: ExitStatus
        let counts = "\(run.itemsDone) of \(run.itemsTotal) items answered (\(answeredNow) now)"
        var message: String
        if let stop {
            try runner.move(&run, to: stop.state, reason: stop.reason)
            status = stop.status
            message = "job \(spec.name): \(stop.reason); \(counts)"
            if stop.state == .interrupted { message += "; run it again to do the rest" }
        } else if run.itemsFailed > 0 {
            let firstError = try runner.store.requests(runID: run.id, states: [.failed]).first?.error ?? "unknown"
            try runner.move(&run, to: .failed, reason: "\(run.itemsFailed) items failed; first: \(firstError)")
            status = .unavailable
            message = "job \(spec.name): \(counts), \(run.itemsFailed) failed (first: \(firstError))"
        } else {
            try runner.move(&run, to: .completed, reason: nil)
            status = .ok
            message = "job \(spec.name): \(counts)"
        }
        return RunOutcome(
            run: run, status: status, message: message, spend: spend, outputDirectory: spec.output,
            answeredNow: answeredNow)
    }
}
