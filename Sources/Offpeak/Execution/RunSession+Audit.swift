import Foundation
import Logging

/// The batch audit (`AuditRecord`): some items of batched calls are asked again alone, through the
/// same lane, and each pair of answers is compared (`AnswerAgreement`). What the comparisons show
/// decides, per job, model and batch size, how many items a prompt may carry.
///
/// A size not yet proven goes out as one probe call per round, audited at several places; the
/// round's other calls of that size wait for the verdict. Where a batched answer and its single
/// answer disagree, the item keeps the single one. When a size fails, the run's answers from
/// prompts of that size or larger that no audit checked are asked again (the audit proved such
/// answers unreliable), in the smaller prompts the record now allows (`reaskOversized`).
extension RunSession {
    /// What the audit did in this pass.
    struct AuditPass {
        /// Audit calls to make once the round's calls are committed.
        var queue: [PlannedCall] = []
        /// The run's audit calls' spend; nil: not read yet.
        var spent: Spend?
        /// What the audit calls in `queue` should cost (counted in the share until they are made).
        var queued = AuditShare.Cost(dollars: 0, tokens: 0)
        /// Whether the pass looked for answers an earlier pass left in prompts that failed since
        /// (it was stopped before asking them again).
        var lookedBack = false
    }

    /// `model`'s audit record for this job, read at most once a second (`RecentReads`).
    func auditRecord(of model: String) -> AuditRecord? {
        let read = { () throws(OffpeakError) -> AuditRecord? in
            try context.store.audits.auditRecord(
                job: spec.name, provider: context.provider.kind.rawValue, model: model)
        }
        return (try? auditReads.value(for: model, now: Date(), read: read)) ?? nil
    }

    /// Whether this pass audits its batched calls: those of a job that did not turn the audit off.
    var audits: Bool { spec.auditing.enabled && spec.batching.enabled }

    /// The round's calls with the places each batched one has audited; a live call of a size still
    /// to be proven waits for the round's probe of that size (its items are planned again next
    /// round). In the batch lane it goes with the probe, unaudited: waiting would cost a whole batch
    /// turnaround, so should the probe fail it, its items are asked again when the batch is
    /// collected (`reaskOversized`).
    ///
    /// The audit keeps to its share of the run's spend (`JobSpec.Audit.maxShare`): a sampled item,
    /// or a probe, is audited while the audit's calls fit that share of what the whole run should
    /// cost (its other calls so far, and its items left as the round batches them). A run too small
    /// to afford a probe is not audited (ask for a larger `max_share` to have it be).
    mutating func withAudits(_ calls: [PlannedCall]) throws(OffpeakError) -> [PlannedCall] {
        guard audits, calls.contains(where: \.isBatched) else { return calls }
        let minimum = spec.batching.agreementWanted
        var share = try auditShare()
        var probes: Set<String> = []
        var kept: [PlannedCall] = []
        for var call in calls {
            guard call.isBatched, !call.requests.contains(where: \.isStep) else {
                kept.append(call)
                continue
            }
            let size = call.requests.count
            let model = call.request.model
            let record = auditRecord(of: model)
            let costs = auditCosts(call)
            let runLeft = runLeft(share, costs: costs)
            if record?.standing(size: size, minAgreement: minimum) ?? .unproven == .proven {
                call.auditing = call.requests.indices.filter { index in
                    AuditSampling.sampled(call.requests[index].id, rate: spec.auditing.rate)
                        && share.admits([costs.single(index)], runLeft: runLeft)
                }
            } else if !probes.contains("\(model)\u{0}\(size)") {
                let earlier = (record?.tally(size: size)?.audited ?? 0) / AuditSampling.probeItems
                let positions = AuditSampling.probePositions(size: size, round: earlier)
                guard share.admits(positions.map { costs.single($0) }, runLeft: runLeft) else {
                    kept.append(call)  // a run too small for a probe goes unaudited
                    continue
                }
                probes.insert("\(model)\u{0}\(size)")
                call.auditing = positions
                call.auditProbe = true
                let news =
                    "auditing a first batched prompt of \(size) items to \(model): "
                    + "\(Plural.count(positions.count, "item")) also asked alone"
                context.logger.info("\(news)")
            } else if batchAPI == nil {
                continue  // waits for the probe of its size: planned again next round
            }
            kept.append(call)
        }
        return kept
    }

    /// What auditing `call`'s items may cost, with the provider's prompt cache.
    private func auditCosts(_ call: PlannedCall) -> AuditCosts {
        AuditCosts(
            call: call, price: context.prices.cost(of: call.request.model),
            cachedPrefix: PromptCacheMinimum.cachedPrefix(of: call.request, provider: context.provider.kind)
                ?? 0)
    }

    /// What the run's items not answered yet should cost, at `share`'s cost per item so far (or
    /// `costs`' estimate of a batched item before any is done).
    private func runLeft(_ share: AuditShare, costs: AuditCosts) -> AuditShare.Cost {
        let remaining = max(0, run.itemsTotal - run.itemsDone - run.itemsFailed)
        return share.perItem(done: run.itemsDone, estimate: costs.batchedItem) * Double(remaining)
    }

    /// The room the audit has in the run's spend (`JobSpec.Audit.maxShare`), the audit calls
    /// queued counted in. Processes answering the run side by side (hosts helping it, each with
    /// a live claim on a round) each queue audits of their own that the others cannot see until
    /// they are made: each takes its part of the room.
    private mutating func auditShare() throws(OffpeakError) -> AuditShare {
        // Read once a round, and kept for the round's gate (`spentSoFar`).
        let spent = try spentSoFar(batch: false)
        let audited = try auditSpent()
        let others = try context.store.leases.liveClaims(
            runID: run.id, except: context.lease.owner, now: Date())
        var share = AuditShare(
            maxShare: spec.auditing.maxShare, others: AuditShare.Cost(spent) - AuditShare.Cost(audited),
            audited: AuditShare.Cost(audited), queued: audit.queued,
            workers: 1 + Set(others.map(\.owner)).count)
        let answered = audited.calls - audited.failedCalls
        if answered > 0 { share.perAudit = AuditShare.Cost(audited) * (1 / Double(answered)) }
        return share
    }

    private mutating func auditSpent() throws(OffpeakError) -> Spend {
        if let spent = audit.spent { return spent }
        let spent = try context.store.audits.auditSpend(job: spec.name, runID: run.id)
        audit.spent = spent
        return spent
    }

    /// Notes a committed batched answer: audit calls for its audited places that were answered.
    ///
    /// A sampled place is held to the audit's share again here, with what the run has really
    /// spent so far and the batched answer's length as the single answer's: a live round may be the
    /// whole run, planned before any call came back, when costs were only guessed. A probe's places
    /// are all asked (the round's other calls of its size wait for its verdict).
    mutating func noteBatched(_ call: PlannedCall, receipt: CallReceipt) throws(OffpeakError) {
        guard audits, call.isBatched, !call.auditing.isEmpty else { return }
        let size = call.requests.count
        let answers = Dictionary(
            receipt.results.map { ($0.requestId, $0.text) }, uniquingKeysWith: { a, _ in a })
        var share = call.auditProbe ? nil : try auditShare()
        let costs = auditCosts(call)
        for index in call.auditing where index < call.requests.count {
            let record = call.requests[index]
            guard let answer = answers[record.id] else { continue }
            let single = costs.single(index, answerTokens: TokenEstimator.tokens(answer))
            if var gate = share {
                guard gate.admits([single], runLeft: runLeft(gate, costs: costs)) else { continue }
                share = gate
            }
            audit.queued = audit.queued + (share?.counted(single) ?? single)
            do {
                let request = try record.completionRequest()
                audit.queue.append(
                    PlannedCall(
                        requests: [record], itemIDs: [], itemTexts: [call.itemTexts[index]], request: request,
                        audit: AuditTarget(size: size, position: index + 1, batchedAnswer: answer)))
            } catch {
                context.logger.debug(
                    "not auditing \(record.itemId): its stored request is unreadable: \(error)")
            }
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
        let now = Date()
        for record in try context.store.audits.auditRecords(job: spec.name)
        where record.provider == context.provider.kind.rawValue && record.itemLimit(at: now) != nil {
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
        answeredNow = max(0, answeredNow - moved)
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
        let commit = auditCommit(
            record, target: target, model: model, answer: done.reply.answer,
            latency: done.ended.timeIntervalSince(done.started), lane: done.lane, now: now)
        if case .failure(let error) = done.reply.answer {
            context.logger.info(
                "an audit call for \(record.itemId) failed (its batched answer stays): \(error)")
        }
        let after = try context.store.audits.commitAudit(commit)
        if let reservation = done.reservation { try context.store.ledger.releaseReservation(reservation) }
        if let ledger = commit.ledger {
            knownSpend?.add(ledger)
            audit.spent?.add(ledger)
        }
        guard let after else { return }
        auditReads.keep(after, for: model, at: now)
        guard let decision = after.decisions.last, decision.at == now else { return }
        context.logger.info("\(AuditNews.line(decision, model: model))")
    }

    /// What an audit call's answer commits (`AuditCommit`): its ledger row (marked audit, with no
    /// naive cost: the naive way makes no such call), and for an answer not cut short, the
    /// comparison with `target`'s batched answer, the record's change and, when they disagree, the
    /// single answer in the item's place (and in the cache). With no `target` (a provider batch that
    /// did not answer the item) nothing is compared.
    func auditCommit(
        _ record: RequestRecord, target: AuditTarget?, model: String,
        answer: Result<CompletionResponse, any Error>, latency: TimeInterval, lane: CallLane, now: Date
    ) -> AuditCommit {
        let price = context.prices.cost(of: model)
        guard case .success(let response) = answer else {
            var ledger = ledgerLine.entry(
                model: model, items: 1, usage: Usage(input: 0, output: 0), usageEstimated: false,
                price: price, at: now, latency: latency, lane: lane)
            ledger.audit = true
            ledger.failed = true
            ledger.naiveDollars = 0
            return AuditCommit(ledger: ledger)
        }
        var ledger = ledgerLine.entry(
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
        let minimum = spec.batching.agreementWanted
        commit.change = AuditChange(
            job: spec.name, provider: context.provider.kind.rawValue, model: model, at: now
        ) {
            $0.record(
                size: target.size, position: target.position, agreed: verdict.agreed, minAgreement: minimum,
                at: now)
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

/// What the audit may still spend in a run: at most `maxShare` of what the run's other calls cost,
/// in dollars (in weighted tokens, input plus output at the model's weight, for a model with no
/// price).
struct AuditShare {
    /// Dollars and weighted tokens: the second decides where the first is unknown (zero).
    struct Cost {
        var dollars: Double
        var tokens: Double

        init(dollars: Double, tokens: Double) {
            self.dollars = dollars
            self.tokens = tokens
        }

        init(_ spend: Spend) {
            dollars = spend.dollars
            tokens = Double(spend.totalInputTokens + spend.outputTokens * 5)
        }

        static func + (a: Cost, b: Cost) -> Cost {
            Cost(dollars: a.dollars + b.dollars, tokens: a.tokens + b.tokens)
        }
        static func - (a: Cost, b: Cost) -> Cost {
            Cost(dollars: a.dollars - b.dollars, tokens: a.tokens - b.tokens)
        }
        static func * (a: Cost, b: Double) -> Cost { Cost(dollars: a.dollars * b, tokens: a.tokens * b) }

        /// Whether `self` is at most `share` of `whole`, in dollars when `whole` has any.
        func within(_ share: Double, of whole: Cost) -> Bool {
            whole.dollars > 0 ? dollars <= share * whole.dollars : tokens <= share * whole.tokens
        }
    }

    var maxShare: Double
    /// What the run's other calls cost so far, and what its audit calls did (every process's).
    var others: Cost
    var audited: Cost
    /// What this pass's audit calls to come should cost.
    var queued = Cost(dollars: 0, tokens: 0)
    /// The processes answering the run now, this one included: each may queue its part of the
    /// room the share leaves.
    var workers = 1
    /// What an answered audit call of the run has cost on average so far; nil before the first.
    /// An audit is counted at no less than this: the estimate of a single call (`AuditCosts`)
    /// guesses its answer's length and the prompt cache, and the audit's share is what was paid.
    var perAudit: Cost?

    /// What an item of the run costs: as measured by the items done so far, or `estimate` before.
    func perItem(done: Int, estimate: Cost) -> Cost {
        guard done > 0, others.dollars > 0 || others.tokens > 0 else { return estimate }
        return others * (1 / Double(done))
    }

    /// An audit call estimated at `cost`, as the share counts it: at no less than `perAudit`.
    func counted(_ cost: Cost) -> Cost {
        guard let perAudit else { return cost }
        return Cost(dollars: max(cost.dollars, perAudit.dollars), tokens: max(cost.tokens, perAudit.tokens))
    }

    /// Whether audit calls of `costs` (a sampled item's, or a probe's) stay within the share of
    /// what the run should cost in all: its other calls so far and `runLeft` to come (the run's
    /// items not answered yet, batched as the calls planned now); counts them when they do.
    mutating func admits(_ costs: [Cost], runLeft: Cost) -> Bool {
        let probe = costs.map(counted).reduce(Cost(dollars: 0, tokens: 0), +)
        let mine = (queued + probe) * Double(max(1, workers))
        guard (audited + mine).within(maxShare, of: others + runLeft) else { return false }
        queued = queued + probe
        return true
    }
}

/// What asking one item of a batched call alone may cost, and what an item costs in the call.
struct AuditCosts {
    let call: PlannedCall
    let price: ModelPrice?
    /// Tokens of the shared prefix the provider's prompt cache holds (the batched calls wrote it):
    /// read at the cache's price by both ways.
    let cachedPrefix: Int

    /// An answer's tokens, as both ways are guessed to write it (its real length is not known yet).
    private var answerTokens: Int { min(64, call.request.maxTokens / max(1, call.requests.count)) }
    private var systemTokens: Int { TokenEstimator.tokens(call.request.system ?? "") }

    /// Item `index` asked alone: the shared prefix, its text, its answer (of `answerTokens`, when
    /// known: the batched answer's length).
    func single(_ index: Int, answerTokens known: Int? = nil) -> AuditShare.Cost {
        cost(
            input: systemTokens - cachedPrefix + TokenEstimator.tokens(call.itemTexts[index]),
            output: known ?? answerTokens, cached: cachedPrefix)
    }

    /// One item's part of a batched call like this one: its share of the prefix, its text and tags,
    /// its answer and key.
    var batchedItem: AuditShare.Cost {
        let size = max(1, call.requests.count)
        let texts = call.itemTexts.reduce(0) { $0 + TokenEstimator.tokens($1) } / size
        let input = (systemTokens - cachedPrefix) / size + texts + Int(BatchPlanner.itemInputOverhead)
        return cost(
            input: input, output: answerTokens + Int(BatchPlanner.itemOutputOverhead),
            cached: cachedPrefix / size)
    }

    private func cost(input: Int, output: Int, cached: Int) -> AuditShare.Cost {
        let usage = Usage(input: input, output: output, cacheRead: cached)
        return AuditShare.Cost(
            dollars: price?.dollars(for: usage, lane: .live) ?? 0,
            tokens: Double(input + cached) + Double(output) * (price?.outputWeight ?? 5))
    }
}

/// How a decision of the audit reads in a pass's log.
enum AuditNews {
    static func line(_ decision: AuditRecord.Decision, model: String) -> String {
        let agreement = "\(decision.agreed) of \(decision.audited) audited items agreed"
        switch decision.kind {
        case .proven:
            return "batched prompts of \(decision.size) items to \(model) hold up (\(agreement))"
        case .halved:
            return "batched prompts of \(decision.size) items to \(model) change answers (\(agreement)): "
                + "at most \(decision.cap ?? 1) items a prompt from now on"
        case .off:
            return "batched prompts of \(decision.size) items to \(model) change answers (\(agreement)): "
                + "its items go alone from now on"
        case .probe:
            return "trying batched prompts of \(decision.size) items to \(model) again"
        }
    }
}
