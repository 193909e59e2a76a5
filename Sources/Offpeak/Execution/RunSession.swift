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
        // Each round plans the pending requests into calls; items a batched answer lost come back in
        // the next round in smaller batches, so every round makes progress and the loop ends.
        rounds: while stop == nil {
            let calls = try plan()
            if calls.isEmpty { break }
            for call in calls {
                stop = try send(call)
                run = try store.run(id: run.id) ?? run
                report()
                if stop != nil { break rounds }
            }
        }
        let writer = OutputWriter(directory: runner.workspace.url(for: spec.output))
        try writer.write(
            job: spec.name, runID: run.id, requests: try store.requests(runID: run.id),
            results: try store.results(runID: run.id))
        return try finish(stop)
    }

    /// The run's pending requests packed into calls; an unreadable stored request fails alone.
    private func plan() throws(OffpeakError) -> [PlannedCall] {
        var pending: [(record: RequestRecord, request: CompletionRequest)] = []
        for record in try runner.store.requests(runID: run.id, states: [.pending, .retrying]) {
            do {
                pending.append((record, try record.completionRequest()))
            } catch {
                try runner.store.commitCall(
                    run: run, ledger: nil, results: [],
                    failed: [(record.id, "stored request unreadable: \(error)")])
            }
        }
        let model = pending.first?.request.model ?? run.model
        let price = runner.prices.price(for: model)
        let planner = BatchPlanner(
            batching: spec.batching, contextWindow: price?.maxInputTokens ?? 128_000,
            maxOutputTokens: price?.maxOutputTokens ?? 8192)
        return planner.plan(pending)
    }

    /// Makes one call and commits what came of it.
    /// - Returns: a `Stop` when the run cannot go on now.
    private mutating func send(_ call: PlannedCall) throws(OffpeakError) -> Stop? {
        let store = runner.store
        let request = call.request
        let price = runner.prices.price(for: request.model)
        let estimate = TokenEstimator.inputTokens(request)
        let worst = price?.dollars(for: Usage(input: estimate, output: request.maxTokens), batch: false)
        if let over = BudgetGuard(budget: spec.budget).check(
            spent: try store.spend(runID: run.id), inputTokens: estimate, maxOutputTokens: request.maxTokens,
            worstDollars: worst)
        {
            run.budgetStop = over.limit.rawValue
            try store.update(run: run)
            return Stop(
                state: .interrupted, reason: "stopped by budget \(over.message)", status: .temporaryFailure)
        }
        let started = Date()
        let response: CompletionResponse
        do {
            response = try runner.provider.complete(request)
        } catch let error as ProviderError {
            return try handle(error, call: call)
        } catch {
            try store.commitCall(
                run: run, ledger: nil, results: [], failed: call.requests.map { ($0.id, "\(error)") })
            return nil
        }
        var ledger = ledgerEntry(
            for: response, request: request, items: call.requests.count, price: price, started: started)
        if call.isBatched {
            try commitBatch(call, response: response, ledger: &ledger, price: price)
        } else if let record = call.requests.first {
            try commitSingle(record, response: response, ledger: ledger)
        }
        return nil
    }

    private mutating func commitSingle(
        _ record: RequestRecord, response: CompletionResponse, ledger: LedgerEntry
    )
        throws(OffpeakError)
    {
        guard response.finishReason != .length else {
            let why = "answer cut off at max_tokens (\(ledger.outputTokens)); raise max_tokens in the spec"
            try runner.store.commitCall(
                run: run, ledger: ledger, results: [], failed: [(record.id, why)], lease: runner.lease)
            return
        }
        let result = ResultRecord(
            requestId: record.id, runId: run.id, text: response.text,
            finishReason: response.finishReason.rawValue,
            model: response.model, fromCache: false, ledgerId: nil, inputTokens: response.usage.totalInput,
            outputTokens: response.usage.output, dollars: ledger.dollars, createdAt: ledger.at)
        try runner.store.commitCall(run: run, ledger: ledger, results: [result], lease: runner.lease)
        answeredNow += 1
    }

    /// Splits a batched answer: answered items are stored with their share of the call's cost,
    /// the rest go back to be asked again in a smaller batch.
    private mutating func commitBatch(
        _ call: PlannedCall, response: CompletionResponse, ledger: inout LedgerEntry, price: ModelPrice?
    ) throws(OffpeakError) {
        let split =
            response.finishReason == .length
            ? AnswerSplitter.Split(
                rejected: Dictionary(uniqueKeysWithValues: call.itemIDs.map { ($0, .cutOff) }))
            : AnswerSplitter.split(response.text, ids: call.itemIDs)
        let systemTokens = TokenEstimator.tokens(call.request.system ?? "")
        var answered: [(record: RequestRecord, text: String, input: Int, output: Int)] = []
        var retry: [(id: String, reason: String)] = []
        for (index, record) in call.requests.enumerated() {
            let id = call.itemIDs[index]
            if let text = split.answers[id] {
                answered.append(
                    (record, text, TokenEstimator.tokens(call.itemTexts[index]), TokenEstimator.tokens(text)))
            } else {
                retry.append((record.id, "batched answer: \(split.rejected[id]?.rawValue ?? "missing")"))
            }
        }
        // What each answered item would have cost alone, with no prompt cache: the naive baseline.
        ledger.naiveDollars = answered.reduce(0) { sum, item in
            sum
                + (price?.naiveDollars(for: Usage(input: systemTokens + item.input, output: item.output)) ?? 0)
        }
        let weight = max(1, answered.reduce(0) { $0 + $1.input + $1.output })
        let results = answered.map { item in
            ResultRecord(
                requestId: item.record.id, runId: run.id, text: item.text,
                finishReason: FinishReason.stop.rawValue,
                model: response.model, fromCache: false, ledgerId: nil, inputTokens: item.input,
                outputTokens: item.output,
                dollars: ledger.dollars * Double(item.input + item.output) / Double(weight),
                createdAt: ledger.at)
        }
        if !retry.isEmpty {
            runner.logger.info(
                "batched answer kept \(results.count) of \(call.requests.count) items; asking again")
        }
        try runner.store.commitCall(
            run: run, ledger: ledger, results: results, retry: retry, lease: runner.lease)
        answeredNow += results.count
    }

    /// A provider failure either stops the run (down, or refusing the account) or fails the item.
    private func handle(_ error: ProviderError, call: PlannedCall) throws(OffpeakError) -> Stop? {
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
        // A refused batched prompt is asked again in smaller pieces; a refused single request fails.
        let entries = call.requests.map { ($0.id, error.description) }
        try runner.store.commitCall(
            run: run, ledger: nil, results: [], retry: call.isBatched ? entries : [],
            failed: call.isBatched ? [] : entries)
        return nil
    }

    private mutating func ledgerEntry(
        for response: CompletionResponse, request: CompletionRequest, items: Int, price: ModelPrice?,
        started: Date
    ) -> LedgerEntry {
        if price == nil, unpricedModels.insert(request.model).inserted {
            runner.logger.warning("no price known for model \(request.model); its calls are recorded at $0")
        }
        let now = Date()
        return LedgerEntry(
            id: nil, at: now, job: spec.name, runId: run.id, provider: runner.provider.kind.rawValue,
            model: request.model, tier: run.tier, downgraded: run.downgraded, items: items,
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
                job: spec.name, done: run.itemsDone, failed: run.itemsFailed, total: run.itemsTotal,
                dollars: dollars))
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
            let firstError =
                try runner.store.requests(runID: run.id, states: [.failed]).first?.error ?? "unknown"
            try runner.move(
                &run, to: .failed, reason: "\(run.itemsFailed) items failed; first: \(firstError)")
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
