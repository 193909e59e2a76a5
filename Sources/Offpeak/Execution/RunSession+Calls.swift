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
        let price = runner.prices.cost(of: request.model)
        if price == nil, let limit = spec.budget.maxDollars {
            // A dollar budget cannot stop a model whose calls cost an unknown amount.
            return Stop(
                state: .interrupted,
                reason: "\(request.model) has no price, so max_dollars (\(Money.dollars(limit))) "
                    + "could not stop it; \(PriceTable.howToPrice(request.model))",
                status: .configuration)
        }
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
            return try handle(
                error, call: call, ledger: failedCallEntry(call, price: price, started: started))
        } catch {
            try store.commitCall(
                run: run, ledger: failedCallEntry(call, price: price, started: started), results: [],
                failed: call.requests.map { ($0.id, "\(error)") })
            return nil
        }
        var ledger = ledgerEntry(
            for: response, request: request, items: call.requests.count, price: price, started: started)
        FailureStreak().store(in: &run)  // an answer ends any streak of alike failures
        if call.isBatched {
            try commitBatch(call, response: response, ledger: &ledger, price: price)
        } else if let record = call.requests.first {
            try commitSingle(record, response: response, ledger: ledger, maxTokens: request.maxTokens)
        }
        return nil
    }

    mutating func commitSingle(
        _ record: RequestRecord, response: CompletionResponse, ledger: LedgerEntry, maxTokens: Int
    )
        throws(OffpeakError)
    {
        guard response.finishReason != .length else {
            let why = Self.cutOffReason(received: ledger.outputTokens, limit: maxTokens)
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

    mutating func ledgerEntry(
        for response: CompletionResponse, request: CompletionRequest, items: Int, price: ModelPrice?,
        started: Date
    ) -> LedgerEntry {
        let now = Date()
        var entry = LedgerEntry(
            id: nil, at: now, job: spec.name, runId: run.id, provider: runner.provider.kind.rawValue,
            model: request.model, tier: run.tier, downgraded: run.downgraded, items: items,
            inputTokens: response.usage.input, outputTokens: response.usage.output,
            cacheReadTokens: response.usage.cacheRead, cacheWriteTokens: response.usage.cacheWrite,
            dollars: price?.dollars(for: response.usage, batch: false) ?? 0,
            naiveDollars: price?.naiveDollars(for: response.usage) ?? 0, batchApi: false, cacheHit: false,
            usageEstimated: response.usageEstimated, latencyMs: Int(now.timeIntervalSince(started) * 1000))
        entry.unpriced = price == nil
        if price == nil, unpricedModels.insert(request.model).inserted {
            runner.logger.warning(
                "no price known for model \(request.model); its calls are marked unpriced in costs and status"
            )
        }
        return entry
    }

    /// The ledger row of a call that brought back no answer: a call made, no tokens, no dollars.
    mutating func failedCallEntry(_ call: PlannedCall, price: ModelPrice?, started: Date) -> LedgerEntry {
        var entry = ledgerEntry(
            for: CompletionResponse(
                text: "", finishReason: .other, usage: Usage(input: 0, output: 0), model: call.request.model,
                id: nil, usageEstimated: false),
            request: call.request, items: call.requests.count, price: price, started: started)
        entry.failed = true
        return entry
    }

    /// Why an answer that stopped at `finish_reason: length` was not kept. Received fewer tokens
    /// than the limit means the server's own limit ended it (a local server's context size).
    static func cutOffReason(received: Int, limit: Int) -> String {
        guard received < limit else {
            return "answer cut off at max_tokens (\(limit)); raise max_tokens in the spec"
        }
        return "answer cut off after \(received) tokens, short of max_tokens (\(limit)): the server's own "
            + "limit ended it (a local server's context size?)"
    }
}
