import Foundation
import Logging

/// What the pass asks next (DESIGN.md: requests -> cache -> planner): the run's due requests; those
/// the cache answers within their TTL are committed at no cost (lever 1); those the model cannot
/// take fail unsent; the rest are packed into calls (lever 2).
extension RunSession {
    /// The run's next due requests packed into calls; an unreadable stored request fails alone.
    ///
    /// A round reads at most `CallPlanning.roundLimit` requests (at most 1,024, 16 waves of the
    /// calls in flight; in the batch lane `BatchLane.roundItems`) from the front of the run's
    /// pending and due requests, in item order, so its time and memory do not grow with the backlog; what the last round planned has
    /// left the front (answered, retrying or failed). A run that size or smaller is planned whole,
    /// in one round.
    ///
    /// A round the cache answered whole (or whose requests all failed unsent) has no call to make,
    /// yet the requests behind it are still due: the next round is read at once. Only a round that
    /// finds no due request at all returns no calls, so an empty answer means the run has nothing
    /// left to send now, never that a round happened to send nothing.
    mutating func nextCalls() throws(OffpeakError) -> [PlannedCall] {
        // A canceled run only collects what its provider batches answered.
        guard !plan.canceled else { return [] }
        try readCommit()
        try lookBack()
        commits.forgetSpend()  // the round's cache hits add ledger rows of their own
        var front: String?
        while true {
            if let stop = options.stop, stop.isRequested { return [] }
            let due = try dueRound()
            // Every request a round reads leaves the front (answered, failed or planned); a front
            // that stayed put would read the same round for ever.
            guard let first = due.first, first.id != front else { return [] }
            front = first.id
            let pending = try unanswered(due)
            guard !pending.isEmpty else { continue }
            // A size the audit backs off is packed again, in the smaller prompts it now allows;
            // each back-off halves the size, so this ends.
            while true {
                let model = pending.first?.request.model ?? run.model
                if let planned = try withAudits(batchPlanner(model: model).plan(pending)) {
                    if !planned.isEmpty { return planned }
                    break
                }
            }
        }
    }

    /// The front of the run's pending and due requests, at most a round of them, in item order,
    /// claimed for this pass: requests another process claimed are left to it while its claim
    /// lives (`LeaseStore.claimRound`), so hosts working one run never ask for one item twice.
    private func dueRound() throws(OffpeakError) -> [RequestRecord] {
        // The batch lane plans bigger rounds: each round is a provider batch, and fewer, larger
        // batches are fewer to poll and collect (`BatchLane.roundItems`).
        let limit = CallPlanning.roundLimit(
            live: options.roundRequests, batchLane: lanes.batchAPI != nil,
            inFlight: context.limiter.inFlightMost,
            batching: spec.batching)
        let hold = context.lease
        return try context.store.leases.claimRound(
            runID: run.id, owner: hold.owner, host: context.host, limit: limit, ttl: hold.ttl, now: Date())
    }

    /// One round's requests: answered from the cache where it can, failed where they cannot be
    /// sent; the rest, to be packed into calls.
    private mutating func unanswered(_ due: [RequestRecord]) throws(OffpeakError)
        -> [(record: RequestRecord, request: CompletionRequest)]
    {
        var pending: [(record: RequestRecord, request: CompletionRequest)] = []
        for record in due {
            do {
                pending.append((record, try record.completionRequest()))
            } catch {
                try context.store.runs.commitCall(
                    run: run, ledger: nil, results: [],
                    failed: [(record.id, "stored request unreadable: \(error)")], lease: context.lease)
            }
        }
        // Under the configured provider's keys first: while a fallback answers, what the provider
        // answered before still costs nothing. Then what is left, as the route asks it.
        pending = try answerFromCache(pending)
        if onFallback { pending = try answerFromCache(pending.map(routed)) }
        return try refuseOversized(pending)
    }

    /// Answers what the cache can, each hit committed with a ledger row of its own (see
    /// `CallReceipt.cacheHits`), and returns the rest.
    private mutating func answerFromCache(_ pending: [(record: RequestRecord, request: CompletionRequest)])
        throws(OffpeakError) -> [(record: RequestRecord, request: CompletionRequest)]
    {
        var rest: [(record: RequestRecord, request: CompletionRequest)] = []
        var hits: [(record: RequestRecord, answer: CachedAnswer)] = []
        let answers = try context.cache.answers(
            for: pending.filter { policy(of: $0.record) == .normal }.map(\.record.cacheKey),
            unchanged: spec.reusesUnchanged, now: context.clock())
        for entry in pending {
            guard policy(of: entry.record) == .normal, let answer = answers[entry.record.cacheKey] else {
                rest.append(entry)
                continue
            }
            hits.append((entry.record, answer))
        }
        guard !hits.isEmpty else { return rest }
        let answered = CallReceipt.cacheHits(hits, line: ledgerLine, now: context.clock())
        try context.store.runs.commitCacheHits(run: run, answered, lease: context.lease)
        tally.answeredNow += hits.filter { !$0.record.isStep }.count
        context.logger.info("\(Plural.count(hits.count, "item")) answered from the cache")
        return rest
    }

    /// Fails, unsent, the requests their model cannot take (`ModelLimits`), and returns the rest.
    private func refuseOversized(_ pending: [(record: RequestRecord, request: CompletionRequest)])
        throws(OffpeakError) -> [(record: RequestRecord, request: CompletionRequest)]
    {
        var refused: [(id: String, reason: String)] = []
        var rest: [(record: RequestRecord, request: CompletionRequest)] = []
        for entry in pending {
            let limits = ModelLimits(
                model: entry.request.model, price: context.prices.price(for: entry.request.model))
            if let why = limits.refusal(of: entry.request) {
                refused.append((entry.record.id, why))
            } else {
                rest.append(entry)
            }
        }
        if !refused.isEmpty {
            try context.store.runs.commitCall(
                run: run, ledger: nil, results: [], failed: refused, lease: context.lease)
        }
        return rest
    }

    /// The run's policy (`run --refresh`) wins over the request's own (a submitted line's `cache`).
    func policy(of record: RequestRecord) -> RequestRecord.CachePolicy {
        options.cachePolicy == .normal ? record.cachePolicy : options.cachePolicy
    }

    /// `answers` for the cache, to be written with the call's commit (`saveToCache` as one write);
    /// nil when there are none, the job caches nothing, or they cannot be encoded (logged: the
    /// answers are committed all the same).
    func cacheWrite(_ answers: [(key: String, answer: CachedAnswer)]) -> CacheWrite? {
        guard !answers.isEmpty, caches else { return nil }
        do {
            return try context.cache.write(
                answers: answers, job: spec.name, provider: context.provider.kind.rawValue,
                ttl: spec.cacheTTL,
                reuse: spec.reusesUnchanged, now: context.clock())
        } catch {
            context.logger.warning("could not cache \(answers.count) answers: \(error)")
            return nil
        }
    }

    /// Keeps new answers for `spec.cacheTTL` (and past it while their prompt is unchanged, for
    /// `reuse: unchanged`); a cache that cannot be written is logged, never fatal.
    func saveToCache(_ answers: [(key: String, answer: CachedAnswer)]) {
        guard !answers.isEmpty, caches else { return }
        do {
            try context.cache.save(
                answers: answers, job: spec.name, provider: context.provider.kind.rawValue,
                ttl: spec.cacheTTL,
                reuse: spec.reusesUnchanged, now: context.clock())
        } catch {
            context.logger.warning("could not cache \(answers.count) answers: \(error)")
        }
    }

    /// Whether the job keeps its answers: `cache_ttl: 0` keeps none, but for `reuse: unchanged`,
    /// whose answers are reused while their prompt is unchanged whatever the TTL.
    private var caches: Bool { spec.cacheTTL > 0 || spec.reusesUnchanged }
}
