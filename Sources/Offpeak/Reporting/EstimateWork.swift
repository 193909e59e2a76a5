import Foundation

/// The requests an estimated run would hold, in the rounds the run would send them: first the
/// unfinished run's pending requests, the spec's new items and long documents' chunks; then, level
/// by level, what combines a long document's summaries. Each looked up in the cache as the run
/// would look it up.
struct EstimateWork {
    var rounds: [[RunEstimator.Entry]] = []
    /// Each item's own request, whole, for the naive way.
    var naive: [CompletionRequest] = []
    var items = 0
    var itemsCached = 0
    var itemsRefused = 0
    var doneBefore = 0
    var inBatch = 0
    var longDocuments = 0
    var chunks = 0
    var stepsCached = 0
    var notes: [String] = []

    static func gather(_ estimator: RunEstimator, open: RunRecord?, answers: AnswerLength)
        throws(OffpeakError) -> EstimateWork
    {
        var work = EstimateWork()
        var first: [RunEstimator.Entry] = []
        var known: Set<String> = []
        if let open, let store = estimator.store {
            let rows = try store.runs.requests(runID: open.id)
            known = Set(rows.map(\.itemId))
            for row in rows where !row.isStep {
                switch row.state {
                case .done, .failed, .skipped: work.doneBefore += 1
                case .inBatch: work.inBatch += 1
                default: break
                }
            }
            for row in rows where row.state == .pending || row.state == .retrying {
                guard let request = try? row.completionRequest() else { continue }
                first.append(try work.entry(row, request, estimator))
                if !row.isStep { work.naive.append(request) }
            }
        }
        let planner = RequestPlanner(provider: estimator.provider.kind, model: estimator.model)
        let longDocuments = LongDocumentPlanner(spec: estimator.spec, planner: planner)
        let planned = planner.plan(estimator.spec).filter { !known.contains($0.itemId) }
        let records = JobRunner.records(
            planned, runID: open?.id ?? "estimate", spec: estimator.spec, now: estimator.now)
        let items = Dictionary(
            estimator.spec.items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var long: [(item: JobSpec.Item, steps: [RunEstimator.Entry])] = []
        for (plan, record) in zip(planned, records) {
            work.naive.append(plan.request)
            if let item = items[plan.itemId], let parts = longDocuments.chunks(of: item) {
                work.items += 1
                work.longDocuments += 1
                work.chunks += parts.count
                var steps: [RunEstimator.Entry] = []
                for step in longDocuments.mapSteps(item, chunks: parts) {
                    steps.append(try work.step(step, source: .chunk, position: record.position, estimator))
                }
                first += steps
                long.append((item, steps))
            } else if record.state == .pending {
                first.append(try work.entry(record, plan.request, estimator))
            } else {
                work.items += 1  // a source that cannot be had: the run waits or fails it unsent
            }
        }
        work.rounds.append(first)
        try work.reduce(long, longDocuments: longDocuments, answers: answers, estimator)
        return work
    }

    /// The rounds that combine each long document's summaries, level by level: with real summaries
    /// where the cache holds every one of a level, else with summaries of the expected length.
    private mutating func reduce(
        _ long: [(item: JobSpec.Item, steps: [RunEstimator.Entry])], longDocuments: LongDocumentPlanner,
        answers: AnswerLength, _ estimator: RunEstimator
    ) throws(OffpeakError) {
        var pending = long
        var level = 2
        while !pending.isEmpty {
            var round: [RunEstimator.Entry] = []
            var next: [(item: JobSpec.Item, steps: [RunEstimator.Entry])] = []
            for (item, steps) in pending {
                let summaries = steps.map { entry in
                    entry.cached?.text
                        ?? String(
                            repeating: "x", count: 4 * answers.tokens(maxTokens: entry.request.maxTokens))
                }
                let position = steps.first?.record.position ?? 0
                switch longDocuments.reduction(item, summaries: summaries, level: level) {
                case .final(let step):
                    // The item's own request, counted as an item already: only its cache hit counts.
                    var final = try self.step(step, source: .reduce, position: position, estimator)
                    final.record.source = .spec
                    if final.cached != nil {
                        stepsCached -= 1
                        itemsCached += 1
                    }
                    round.append(final)
                case .reduce(let group):
                    var made: [RunEstimator.Entry] = []
                    for step in group {
                        made.append(try self.step(step, source: .reduce, position: position, estimator))
                    }
                    round += made
                    next.append((item, made))
                }
            }
            rounds.append(round)
            pending = next
            level += 1
        }
    }

    /// A long document's step as the run would store it.
    private mutating func step(
        _ step: LongDocumentPlanner.Step, source: RequestSource, position: Int, _ estimator: RunEstimator
    ) throws(OffpeakError) -> RunEstimator.Entry {
        let record = RequestRecord(
            id: RequestRecord.newID(), runId: "estimate", job: estimator.spec.name, itemId: step.itemId,
            position: position, source: source, clientId: nil, tier: estimator.spec.tier.rawValue,
            payload: step.payload, cacheKey: step.cacheKey, state: .pending, attempts: 0, nextAttemptAt: nil,
            error: nil, createdAt: estimator.now, updatedAt: estimator.now)
        return try entry(record, step.request, estimator)
    }

    /// Looks `record` up as the run would, and counts it: an item, or a step of one.
    private mutating func entry(
        _ record: RequestRecord, _ request: CompletionRequest, _ estimator: RunEstimator
    ) throws(OffpeakError) -> RunEstimator.Entry {
        let policy = estimator.cachePolicy == .normal ? record.cachePolicy : estimator.cachePolicy
        let cached =
            policy == .normal
            ? try estimator.cache?.peekAnswer(for: record.cacheKey, unchanged: estimator.spec.reusesUnchanged)
            : nil
        let limits = ModelLimits(model: request.model, price: estimator.prices.price(for: request.model))
        let refused = cached == nil && limits.refusal(of: request) != nil
        if record.isStep {
            stepsCached += cached == nil ? 0 : 1
        } else {
            items += 1
            itemsCached += cached == nil ? 0 : 1
            itemsRefused += refused ? 1 : 0
        }
        return RunEstimator.Entry(record: record, request: request, cached: cached, refused: refused)
    }
}
