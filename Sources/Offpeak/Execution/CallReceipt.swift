import Foundation

/// What one call (or one round of cache hits) leaves in the store: its ledger rows, each answered
/// item's result, the items to ask again or later or never, and the answers to cache. Built in one
/// place for every way a call can end, then committed in one transaction (`RunSession.commit`).
struct CallReceipt: Sendable {
    // One field per kind of outcome a call leaves its items with, as `CallCommit` stores them.
    var ledger: LedgerEntry?
    var results: [ResultRecord] = []
    /// Items to ask again on the next pass, in smaller batches (a batched answer lost them).
    var retry: [(id: String, reason: String)] = []
    /// Items to ask again after a backoff.
    var later: [(id: String, reason: String, at: Date)] = []
    /// Items to ask again at a time, no attempt counted (`CallCommit.postponed`).
    var postponed: [(id: String, reason: String, at: Date)] = []
    /// Items that will not be asked again.
    var failed: [(id: String, reason: String)] = []
    /// New answers to keep, each under its item's own key.
    var cacheEntries: [(key: String, answer: CachedAnswer)] = []
    /// Items (not long-document steps) answered.
    var itemsAnswered = 0
    /// What the call makes of the run, when it stops it.
    var stop: RunStop?
    /// How a batched answer fared, for the model's record (`BatchFitness`).
    var batchedAnswer: BatchedAnswer?
}

/// How one batched answer fared: items asked and kept, the rest by why.
struct BatchedAnswer: Sendable, Equatable {
    var asked: Int
    var kept: Int
    var rejected: [String: Int]
    var structured: Bool

    /// `kept 3 of 8 items (missing from the answer: 5)`.
    var summary: String {
        let why = rejected.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key): \($0.value)" }
        return "kept \(kept) of \(Plural.count(asked, "item"))"
            + (why.isEmpty ? "" : " (\(why.joined(separator: ", ")))")
    }
}

/// The run a ledger row belongs to, as every row of it names it.
struct LedgerLine: Sendable {
    var job: String
    var runID: String
    var provider: ProviderKind
    var tier: String
    var downgraded: Bool
    /// The host making the calls (`HostName`).
    var host: String
    /// The tags of the work, as the ledger keeps them (`Tags.stored`).
    var tags = ""
    /// By model, the dearest prices the run's wait for cheaper ones went through (`PriceWatch.waited`):
    /// each call's usage at them, less what it was billed, is what waiting saved on it. Nil when the
    /// run did not wait.
    var pricesWhenWaiting: (@Sendable (String) -> ModelPrice?)? = nil

    /// The line for a call answering `requests`: their own tags (submitted requests') with the
    /// job's. A batched call's requests all have the same (`BatchPlanner` keeps other tags apart).
    func answering(_ requests: [RequestRecord]) -> LedgerLine {
        let own = requests.compactMap(\.tags)
        guard !own.isEmpty else { return self }
        var line = self
        line.tags = Tags.stored(Tags.tags(tags) + own.flatMap(Tags.tags))
        return line
    }

    /// A row for one call, priced with `price` (`nil`: unpriced, recorded at $0 and marked so) at
    /// the prices of the call's `lane`.
    func entry(
        model: String, items: Int, usage: Usage, usageEstimated: Bool, price: ModelPrice?, at now: Date,
        latency: TimeInterval, lane: CallLane = .live
    ) -> LedgerEntry {
        var entry = LedgerEntry(
            id: nil, at: now, job: job, runId: runID, provider: provider.rawValue, model: model, tier: tier,
            downgraded: downgraded, items: items, inputTokens: usage.input, outputTokens: usage.output,
            cacheReadTokens: usage.cacheRead, cacheWriteTokens: usage.cacheWrite,
            dollars: price?.dollars(for: usage, lane: lane) ?? 0,
            naiveDollars: price?.naiveDollars(for: usage) ?? 0, batchApi: lane == .batch, cacheHit: false,
            usageEstimated: usageEstimated, latencyMs: Int(latency * 1000))
        // Searches the table has no price for cost an unknown amount, as an unpriced model's tokens do.
        entry.unpriced = price == nil || (usage.searches > 0 && price?.perSearch == nil)
        entry.host = host
        entry.flex = lane == .flex
        entry.searchRequests = usage.searches
        entry.priceWindow = price?.window ?? ""
        entry.tags = tags
        if let price, let then = pricesWhenWaiting?(model), then.window != nil {
            entry.waitingSaved = then.dollars(for: usage, lane: lane) - price.dollars(for: usage, lane: lane)
        }
        return entry
    }
}

extension CallReceipt {
    /// An answered call: one item's answer, or a batched answer split into its items' answers (with
    /// the call's cost shared by token share) and the items it lost, to be asked again.
    /// - Parameter lane: the lane the answer came through (its prices).
    static func answered(
        _ call: PlannedCall, response: CompletionResponse, price: ModelPrice?, line: LedgerLine,
        started: Date, now: Date, lane: CallLane = .live
    ) -> CallReceipt {
        let ledger = line.answering(call.requests).entry(
            model: call.request.model, items: call.requests.count, usage: response.usage,
            usageEstimated: response.usageEstimated, price: price, at: now,
            latency: now.timeIntervalSince(started), lane: lane)
        if call.isBatched {
            return batched(call, response: response, price: price, ledger: ledger, runID: line.runID)
        }
        var receipt = CallReceipt(ledger: ledger)
        guard let record = call.requests.first else { return receipt }
        // An answer cut off at `max_tokens` (`finish_reason: length`) was paid for: it is kept and
        // cached as it is, marked by its finish reason, so a rerun does not buy it again
        // (`OutputWriter` marks it in index.json, `RunVerdict` says so).
        let result = ResultRecord(
            requestId: record.id, runId: line.runID, text: response.text,
            finishReason: response.finishReason.rawValue, model: response.model, fromCache: false,
            ledgerId: nil,
            inputTokens: response.usage.totalInput, outputTokens: response.usage.output,
            dollars: ledger.dollars,
            createdAt: now, citations: SearchCitation.stored(response.citations))
        receipt.results = [result]
        receipt.cacheEntries = [(record.cacheKey, CachedAnswer(result, naiveDollars: ledger.naiveDollars))]
        receipt.itemsAnswered = record.isStep ? 0 : 1
        return receipt
    }

    /// A batched answer: each item the splitter accepts is stored with its share of the call's cost;
    /// the rest go back to be asked again in a smaller batch.
    private static func batched(
        _ call: PlannedCall, response: CompletionResponse, price: ModelPrice?, ledger: LedgerEntry,
        runID: String
    ) -> CallReceipt {
        let split =
            response.finishReason == .length
            ? AnswerSplitter.Split(
                rejected: Dictionary(uniqueKeysWithValues: call.itemIDs.map { ($0, .cutOff) }))
            : AnswerSplitter.split(response.text, ids: call.itemIDs)
        let systemTokens = TokenEstimator.tokens(call.request.system ?? "")
        var answered: [(record: RequestRecord, text: String, input: Int, output: Int)] = []
        var receipt = CallReceipt(ledger: ledger)
        for (index, record) in call.requests.enumerated() {
            let id = call.itemIDs[index]
            if let text = split.answers[id] {
                answered.append(
                    (record, text, TokenEstimator.tokens(call.itemTexts[index]), TokenEstimator.tokens(text)))
            } else {
                receipt.retry.append(
                    (record.id, "batched answer: \(split.rejected[id]?.rawValue ?? "missing")"))
            }
        }
        // What each answered item would have cost alone, with no prompt cache: the naive baseline.
        func naive(_ item: (record: RequestRecord, text: String, input: Int, output: Int)) -> Double {
            price?.naiveDollars(for: Usage(input: systemTokens + item.input, output: item.output)) ?? 0
        }
        receipt.ledger?.naiveDollars = answered.reduce(0) { $0 + naive($1) }
        let weight = max(1, answered.reduce(0) { $0 + $1.input + $1.output })
        for item in answered {
            let result = ResultRecord(
                requestId: item.record.id, runId: runID, text: item.text,
                finishReason: FinishReason.stop.rawValue, model: response.model, fromCache: false,
                ledgerId: nil,
                inputTokens: item.input, outputTokens: item.output,
                dollars: ledger.dollars * Double(item.input + item.output) / Double(weight),
                createdAt: ledger.at)
            receipt.results.append(result)
            // Each item is cached under its own single-request key, so a later batch (or a lone
            // request) for the same item reuses it.
            receipt.cacheEntries.append(
                (item.record.cacheKey, CachedAnswer(result, naiveDollars: naive(item))))
        }
        receipt.itemsAnswered = answered.filter { !$0.record.isStep }.count
        receipt.batchedAnswer = BatchedAnswer(
            asked: call.requests.count, kept: answered.count,
            rejected: split.rejected.values.reduce(into: [:]) { $0[$1.rawValue, default: 0] += 1 },
            structured: call.request.answerKeys != nil)
        return receipt
    }

    /// Answers taken from the cache: each with a ledger row of its own (no tokens, no dollars, and
    /// as `naive` what asking for it alone would cost), so `offpeak costs` shows what the cache saved.
    static func cacheHits(
        _ hits: [(record: RequestRecord, answer: CachedAnswer)], line: LedgerLine, now: Date
    ) -> [(ledger: LedgerEntry, result: ResultRecord)] {
        hits.map { record, answer in
            var ledger = line.answering([record]).entry(
                model: answer.model, items: 1, usage: Usage(input: 0, output: 0), usageEstimated: false,
                price: nil, at: now, latency: 0)
            ledger.cacheHit = true
            ledger.unpriced = false
            ledger.naiveDollars = answer.naiveDollars
            let result = ResultRecord(
                requestId: record.id, runId: line.runID, text: answer.text, finishReason: answer.finishReason,
                model: answer.model, fromCache: true, ledgerId: nil, inputTokens: answer.inputTokens,
                outputTokens: answer.outputTokens, dollars: 0, createdAt: now, citations: answer.citations)
            return (ledger, result)
        }
    }

    /// What ended an answer that stopped at `finish_reason: length`. Received fewer tokens than the
    /// limit means the server's own limit ended it (a local server's context size).
    static func cutOffReason(received: Int, limit: Int) -> String {
        guard received < limit else {
            return "answer cut off at max_tokens (\(limit)); raise max_tokens in the spec"
        }
        return "answer cut off after \(received) tokens, short of max_tokens (\(limit)): the server's own "
            + "limit ended it (a local server's context size?)"
    }
}

extension CachedAnswer {
    /// The answer of `result`, to keep in the cache.
    init(_ result: ResultRecord, naiveDollars: Double) {
        self.init(
            text: result.text, model: result.model, finishReason: result.finishReason,
            inputTokens: result.inputTokens, outputTokens: result.outputTokens, dollars: result.dollars,
            naiveDollars: naiveDollars, citations: result.citations)
    }
}
