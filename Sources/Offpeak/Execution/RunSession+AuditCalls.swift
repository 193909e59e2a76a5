import Foundation
import Logging

/// The batch audit's calls (`RunSession+Audit` decides which items a round audits): queued with the
/// batched answers they check (`QueuedAudit`), made once the round's calls are committed (and by
/// the run's next pass when a stop came first), each committed with what it decided; and the
/// answers of a size that failed asked again.
extension RunSession {
    /// Notes a committed batched answer: audit calls for its audited places that were answered.
    ///
    /// A sampled place is held to the audit's share again here, with what the run has really
    /// spent so far and the batched answer's length as the single answer's: a live round may be the
    /// whole run, planned before any call came back, when costs were only guessed. A probe's places
    /// are all asked (the round's other calls of its size wait for its verdict).
    /// - Returns: the audits to queue with the call's commit (`QueuedAudit`).
    mutating func noteBatched(_ call: PlannedCall, receipt: CallReceipt) throws(OffpeakError) -> [QueuedAudit]
    {
        guard audits, call.isBatched, !call.auditing.isEmpty else { return [] }
        var queued: [QueuedAudit] = []
        let size = call.requests.count
        let answers = Dictionary(
            receipt.results.map { ($0.requestId, $0.text) }, uniquingKeysWith: { a, _ in a })
        var share = call.auditProbe ? nil : try auditShare()
        let apart = auditRecord(of: call.request.model)?.watched == true
        let costs = auditCosts(call)
        for index in call.auditing where index < call.requests.count {
            let record = call.requests[index]
            guard let answer = answers[record.id] else { continue }
            let single = costs.single(index, answerTokens: TokenEstimator.tokens(answer))
            if var gate = share {
                guard
                    gate.admits(
                        [single], runLeft: runLeft(gate, costs: costs), within: spec.auditing.maxShare,
                        apart: apart)
                else { continue }
                share = gate
            }
            audit.queued = audit.queued + (share?.counted(single) ?? single)
            let target = AuditTarget(
                size: size, position: index + 1, batchedAnswer: answer, probe: call.auditProbe)
            if let planned = auditCall(record, target: target) {
                audit.queue.append(planned)
                queued.append(
                    QueuedAudit(requestID: record.id, size: size, position: index + 1, probe: call.auditProbe)
                )
            }
        }
        return queued
    }

    /// The call that asks `record` alone to check `target`; nil when its stored request is unreadable.
    private func auditCall(_ record: RequestRecord, target: AuditTarget) -> PlannedCall? {
        do {
            return PlannedCall(
                requests: [record], itemIDs: [], itemTexts: [""], request: try record.completionRequest(),
                audit: target)
        } catch {
            context.logger.debug("not auditing \(record.itemId): its stored request is unreadable: \(error)")
            return nil
        }
    }

    /// Once a pass, for the pass holding the run: the audits an earlier pass queued and was
    /// stopped before making (`AuditStore.queuedAudits`), made with this pass's first audits.
    mutating func resumeAudits() throws(OffpeakError) {
        guard audits, context.lease.leased else { return }
        let known = Set(audit.queue.compactMap(\.requests.first?.id))
        for (queued, record, answer) in try context.store.audits.queuedAudits(runID: run.id)
        where !known.contains(record.id) {
            let target = AuditTarget(
                size: queued.size, position: queued.position, batchedAnswer: answer, probe: queued.probe)
            if let planned = auditCall(record, target: target) { audit.queue.append(planned) }
        }
    }

    /// Makes the round's audit calls, commits each, then asks again what a failed size answered.
    /// - Returns: why the pass stops, if it does.
    mutating func auditRound(_ calls: CallsInFlight) throws(OffpeakError) -> RunStop? {
        guard !audit.queue.isEmpty else { return nil }
        let queue = audit.queue
        audit.queue = []
        let stop = try send(queue, in: calls)
        audit.queued = AuditShare.Cost(dollars: 0, tokens: 0)  // made: in the ledger now
        for model in Set(queue.map(\.request.model)).sorted() { try reaskOversized(model: model) }
        return stop
    }

    /// Once a pass, before its first round: answers an earlier pass left in prompts that failed
    /// since, for every model the job's audit has capped.
    mutating func lookBack() throws(OffpeakError) {
        guard audits, !audit.lookedBack else { return }
        audit.lookedBack = true
        try resumeAudits()
        let now = Date()
        for record in try context.store.audits.auditRecords(job: spec.name)
        where record.provider == context.provider.kind.rawValue
            && record.matches(shape: spec.auditShape, target: spec.auditTarget)
            && record.itemLimit(at: now) != nil
        {
            try reaskOversized(model: record.model)
        }
    }

    /// Asks again every answer of the run from a prompt to `model` larger than the audit now allows
    /// that no audit checked (`AuditStore.uncheckedAnswers`): back to pending, cached copies gone,
    /// to be asked in the smaller prompts the record allows.
    mutating func reaskOversized(model: String) throws(OffpeakError) {
        guard audits, let limit = auditRecord(of: model)?.itemLimit(at: Date()) else { return }
        let store = context.store
        let again = try store.audits.uncheckedAnswers(runID: run.id, model: model, largerThan: limit)
        guard !again.isEmpty else { return }
        let moved = try store.audits.reopen(
            runID: run.id, requests: again,
            reason: "asked again: the audit found batched answers of more than \(limit) items unreliable",
            now: Date())
        guard moved > 0 else { return }
        if let fresh = try store.runs.run(id: run.id) {
            run.itemsDone = fresh.itemsDone
            run.itemsFailed = fresh.itemsFailed
            run.itemsCached = fresh.itemsCached
        }
        tally.answeredNow = max(0, tally.answeredNow - moved)
        let news =
            "\(Plural.count(moved, "item")) answered in batched prompts of more than \(limit) items "
            + "asked again in smaller prompts"
        context.logger.info("\(news)")
    }

    /// Commits an audit call: the comparison, the record's change and, when the answers disagree,
    /// the single answer in the batched one's place.
    mutating func settleAudit(_ done: CallsInFlight.Finished, target: AuditTarget) throws(OffpeakError) {
        let call = done.call
        guard let record = call.requests.first else { return }
        let model = call.request.model
        try readCommit()
        let now = context.clock()
        var commit = auditCommit(
            record, target: target, model: model, answer: done.reply.answer,
            latency: done.ended.timeIntervalSince(done.started), lane: done.lane, now: now,
            billedAt: context.billedAt(done))
        commit.queued = record.id
        commit.reservation = done.reservation
        if case .failure(let error) = done.reply.answer {
            context.logger.info(
                "an audit call for \(record.itemId) failed (its batched answer stays): \(error)")
        }
        let after = try context.store.audits.commitAudit(commit)
        if let ledger = commit.ledger {
            commits.add(ledger)
            audit.spent?.add(ledger)
            if target.probe { audit.proving.add(ledger) }
        }
        guard let after else { return }
        audit.reads.keep(after, for: model, at: now)
        guard let decision = after.decisions.last, decision.at == now else { return }
        // Decided: a host waiting for this verdict may go on.
        try context.store.audits.releaseProbes(
            owner: context.lease.owner,
            key: ProbeKey(
                job: spec.name, provider: context.provider.kind.rawValue, model: model, size: decision.size))
        context.logger.info("\(AuditNews.line(decision, model: model))")
    }

    /// What an audit call's answer commits (`AuditCommit`): its ledger row (marked audit, with no
    /// naive cost: the naive way makes no such call), and for an answer not cut short, the
    /// comparison with `target`'s batched answer, the record's change and, when they disagree, the
    /// single answer in the item's place (and in the cache). With no `target` (a provider batch that
    /// did not answer the item) nothing is compared.
    func auditCommit(
        _ record: RequestRecord, target: AuditTarget?, model: String,
        answer: Result<CompletionResponse, any Error>, latency: TimeInterval, lane: CallLane, now: Date,
        billedAt: Date
    ) -> AuditCommit {
        let price = context.prices.cost(of: model, at: billedAt)
        guard case .success(let response) = answer else {
            var ledger = ledgerLine.answering([record]).entry(
                model: model, items: 1, usage: Usage(input: 0, output: 0), usageEstimated: false,
                price: price, at: now, latency: latency, lane: lane)
            ledger.audit = true
            ledger.failed = true
            ledger.naiveDollars = 0
            return AuditCommit(ledger: ledger)
        }
        var ledger = ledgerLine.answering([record]).entry(
            model: model, items: 1, usage: response.usage, usageEstimated: response.usageEstimated,
            price: price, at: now, latency: latency, lane: lane)
        ledger.audit = true
        ledger.naiveDollars = 0  // a call the naive way would not make
        var commit = AuditCommit(ledger: ledger)
        // A cut answer proves nothing.
        guard let target, response.finishReason != .length else { return commit }
        let verdict = AnswerAgreement.compare(target.batchedAnswer, response.text)
        commit.row = AuditRow(
            id: nil, at: now, job: spec.name, runID: run.id, requestID: record.id, itemID: record.itemId,
            provider: context.provider.kind.rawValue, model: model, batchSize: target.size,
            position: target.position, agreed: verdict.agreed, similarity: verdict.similarity,
            batchedAnswer: target.batchedAnswer, singleAnswer: response.text, keptSingle: !verdict.agreed,
            ledgerID: nil, host: context.host)
        let (shape, goal) = (spec.auditShape, spec.auditTarget)
        commit.change = AuditChange(
            job: spec.name, provider: context.provider.kind.rawValue, model: model, at: now
        ) {
            $0.record(
                size: target.size, position: target.position, agreed: verdict.agreed, shape: shape,
                target: goal, at: now)
        }
        guard !verdict.agreed else { return commit }
        let result = ResultRecord(
            requestId: record.id, runId: run.id, text: response.text,
            finishReason: response.finishReason.rawValue, model: response.model, fromCache: false,
            ledgerId: nil, inputTokens: response.usage.totalInput, outputTokens: response.usage.output,
            dollars: ledger.dollars, createdAt: now, citations: SearchCitation.stored(response.citations))
        commit.replacement = result
        let naive = price?.naiveDollars(for: response.usage) ?? 0
        commit.cache = cacheWrite([(record.cacheKey, CachedAnswer(result, naiveDollars: naive))])
        return commit
    }
}
