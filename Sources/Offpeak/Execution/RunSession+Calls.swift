import Foundation
import Logging

/// Making one planned call and committing what came of it: an answer, a batch to split, or a
/// failure that stops the run or fails its items.
extension RunSession {
    /// Makes one call and commits what came of it.
    /// - Returns: a `Stop` when the run cannot go on now.
    mutating func send(_ call: PlannedCall) throws(OffpeakError) -> Stop? {
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
        if let stop = try boundary(before: call) { return stop }
        callsMade += 1
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

    mutating func commitSingle(
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
        saveToCache([
            (
                record.cacheKey,
                CachedAnswer(
                    text: result.text, model: result.model, finishReason: result.finishReason,
                    inputTokens: result.inputTokens, outputTokens: result.outputTokens,
                    dollars: result.dollars,
                    naiveDollars: ledger.naiveDollars)
            )
        ])
        if !LongDocumentPlanner.stepSources.contains(record.source) { answeredNow += 1 }
    }

    /// Splits a batched answer: answered items are stored with their share of the call's cost,
    /// the rest go back to be asked again in a smaller batch.
    mutating func commitBatch(
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
        answeredNow += answered.filter { !LongDocumentPlanner.stepSources.contains($0.record.source) }.count
        // Each item is cached under its own single-request key, so a later batch (or a lone
        // request) for the same item reuses it.
        saveToCache(
            zip(answered, results).map { item, result in
                let naive = price?.naiveDollars(
                    for: Usage(input: systemTokens + item.input, output: item.output))
                return (
                    item.record.cacheKey,
                    CachedAnswer(
                        text: result.text, model: result.model, finishReason: result.finishReason,
                        inputTokens: result.inputTokens, outputTokens: result.outputTokens,
                        dollars: result.dollars,
                        naiveDollars: naive ?? 0)
                )
            })
    }

    /// A provider failure either stops the run (down, or refusing the account) or sends the
    /// call's items back to be retried later (see `retryLater`).
    func handle(_ error: ProviderError, call: PlannedCall) throws(OffpeakError) -> Stop? {
        if let stop = options.stop, stop.isRequested {
            // A call aborted when the grace period ran out: nothing of it is kept, and it is not the
            // items' fault.
            return Stop(
                state: .interrupted, reason: "stopped by \(stop.reason ?? "a signal")",
                status: .temporaryFailure)
        }
        if case .unreachable = error {
            // Nothing answers: the work waits, offline, and the next tick tries again.
            try countAttempt(call, error: error)
            return Stop(
                state: .waiting, reason: "offline: \(error.description)", status: .temporaryFailure,
                deferred: [.offline])
        }
        if error.isTransient {
            try countAttempt(call, error: error)
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
        // A refused batched prompt is asked again in smaller pieces; a refused single request is
        // retried later, with backoff, until the job's attempts run out.
        if call.isBatched {
            try runner.store.commitCall(
                run: run, ledger: nil, results: [], retry: call.requests.map { ($0.id, error.description) })
        } else {
            try retryLater(call, error: error.description)
        }
        return nil
    }

    /// Each item of the call waits `RetryBackoff` before its next attempt, or fails for good once
    /// it has had the job's `max_attempts`; the error says which ("retrying at T (attempt n of N)").
    func retryLater(_ call: PlannedCall, error: String) throws(OffpeakError) {
        let now = Date()
        let (failed, rest) = lastAttempts(call, error: error)
        let later = rest.map { record in
            let attempt = record.attempts + 1
            let at = now + RetryBackoff.delay(afterAttempt: attempt)
            let why =
                "\(error); retrying at \(Timestamp.text(at)) (attempt \(attempt + 1) of \(spec.maxAttempts))"
            return (id: record.id, reason: why, at: at)
        }
        try runner.store.commitCall(run: run, ledger: nil, results: [], failed: failed, later: later)
    }

    /// The provider's trouble, not the items': they are tried again on the next pass, but a call
    /// that has failed `max_attempts` times fails its items rather than stopping every run forever.
    private func countAttempt(_ call: PlannedCall, error: ProviderError) throws(OffpeakError) {
        let (failed, rest) = lastAttempts(call, error: error.description)
        try runner.store.commitCall(
            run: run, ledger: nil, results: [], retry: rest.map { ($0.id, error.description) }, failed: failed
        )
    }

    /// Splits the call's items into those this failure leaves with no attempt (failed, with why)
    /// and the rest.
    private func lastAttempts(_ call: PlannedCall, error: String)
        -> (failed: [(id: String, reason: String)], rest: [RequestRecord])
    {
        let spent = call.requests.filter { $0.attempts + 1 >= spec.maxAttempts }
        return (
            spent.map { ($0.id, "\(error); gave up after \($0.attempts + 1) attempts") },
            call.requests.filter { $0.attempts + 1 < spec.maxAttempts }
        )
    }

    mutating func ledgerEntry(
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
}
