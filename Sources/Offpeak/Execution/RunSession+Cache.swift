import Foundation
import Logging

/// The cache's part in a run (DESIGN.md, lever 1): a request already answered within its TTL is
/// answered again from the cache at no cost, and every new answer is kept for the next time.
extension RunSession {
    /// Answers what the cache can and returns the rest.
    ///
    /// Each hit is committed with a ledger row of its own: no tokens, no dollars, and as `naive`
    /// what asking for it alone would cost, so `offpeak costs` shows what the cache saved.
    mutating func answerFromCache(_ pending: [(record: RequestRecord, request: CompletionRequest)])
        throws(OffpeakError) -> [(record: RequestRecord, request: CompletionRequest)]
    {
        var rest: [(record: RequestRecord, request: CompletionRequest)] = []
        var hits: [(record: RequestRecord, answer: CachedAnswer)] = []
        for entry in pending {
            guard policy(of: entry.record) == .normal,
                let answer = try runner.cache.answer(for: entry.record.cacheKey)
            else {
                rest.append(entry)
                continue
            }
            hits.append((entry.record, answer))
        }
        guard !hits.isEmpty else { return rest }
        let now = Date()
        let answered = hits.map { record, answer in
            let ledger = LedgerEntry(
                id: nil, at: now, job: spec.name, runId: run.id, provider: runner.provider.kind.rawValue,
                model: answer.model, tier: run.tier, downgraded: run.downgraded, items: 1, inputTokens: 0,
                outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, dollars: 0,
                naiveDollars: answer.naiveDollars, batchApi: false, cacheHit: true, usageEstimated: false,
                latencyMs: 0)
            let result = ResultRecord(
                requestId: record.id, runId: run.id, text: answer.text, finishReason: answer.finishReason,
                model: answer.model, fromCache: true, ledgerId: nil, inputTokens: answer.inputTokens,
                outputTokens: answer.outputTokens, dollars: 0, createdAt: now)
            return (ledger: ledger, result: result)
        }
        try runner.store.commitCacheHits(run: run, answered, lease: runner.lease)
        answeredNow += hits.filter { !LongDocumentPlanner.stepSources.contains($0.record.source) }.count
        runner.logger.info("\(hits.count) items answered from the cache")
        return rest
    }

    /// The run's policy (`run --refresh`) wins over the request's own (a submitted line's `cache`).
    func policy(of record: RequestRecord) -> RequestRecord.CachePolicy {
        options.cachePolicy == .normal ? record.cachePolicy : options.cachePolicy
    }

    /// Keeps new answers for `spec.cacheTTL`; a cache that cannot be written is logged, never fatal.
    func saveToCache(_ answers: [(key: String, answer: CachedAnswer)]) {
        guard !answers.isEmpty, spec.cacheTTL > 0 else { return }
        do {
            try runner.cache.save(
                answers: answers, job: spec.name, provider: runner.provider.kind.rawValue, ttl: spec.cacheTTL)
        } catch {
            runner.logger.warning("could not cache \(answers.count) answers: \(error)")
        }
    }
}
