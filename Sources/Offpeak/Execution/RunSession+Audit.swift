import Foundation
import Logging

/// The batch audit (`AuditRecord`): some items of batched calls are asked again alone, through the
/// same lane, and each pair of answers is compared (`AnswerAgreement`). What the comparisons show
/// decides, per job, model and batch size, how many items a prompt may carry.
///
/// A size not yet shown to hold goes out as probes, audited at their tail (`AuditSampling`): as
/// many a round as the sequential test (`SequentialTest`) needs to decide if they all agreed; in
/// the live lane the round's other calls of that size wait for the verdict. A size that holds is
/// sampled. Where a batched answer and its single answer disagree, the item keeps the single one.
/// When a size fails, the run's answers from prompts of that size or larger that no audit checked
/// are asked again (the audit proved such answers unreliable), in the smaller prompts the record
/// now allows (`reaskOversized`).
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
        /// Whether the pass planned batched calls the audit could check.
        var batched = false
        /// What this pass's audits of probes cost: proving, apart from sampling (`AuditShare.proving`).
        var proving = Spend()
        /// The audit records this pass has read or written lately (`auditRecord(of:)`).
        let reads = RecentReads<AuditRecord>()
    }

    /// `model`'s audit record for this job, read at most once a second (`RecentReads`); nil before
    /// its first audit, or when its evidence was gathered for another prompt shape or target (the
    /// job starts over).
    func auditRecord(of model: String) -> AuditRecord? {
        let read = { () throws(OffpeakError) -> AuditRecord? in
            try context.store.audits.auditRecord(
                job: spec.name, provider: context.provider.kind.rawValue, model: model)
        }
        let record = (try? audit.reads.value(for: model, now: Date(), read: read)) ?? nil
        return record.flatMap { $0.matches(shape: spec.auditShape, target: spec.auditTarget) ? $0 : nil }
    }

    /// Whether this pass audits its batched calls: those of a job that did not turn the audit off.
    var audits: Bool { spec.auditing.enabled && spec.batching.enabled }

    /// The round's calls with the places each batched one audits (`AuditSampling`); nil when the
    /// audit backed a size off meanwhile (the round is packed again, in smaller prompts).
    ///
    /// A call of a size that holds is sampled, within the audit's `max_share` of the run. One of a
    /// size still to be proven is a probe while the round has fewer than the test needs and they
    /// fit the audit's `proving_share`; past that, in the live lane it waits for the probes (its
    /// items are planned again next round), and in the batch lane it goes with them, unaudited:
    /// waiting would cost a whole batch turnaround, so should the probes fail, its items are asked
    /// again when the batch is collected (`reaskOversized`). When the proving share is spent before
    /// a size holds, a size whose evidence leans to changed answers is backed off (halved), and so is
    /// any size above 2 of a watched model (`AuditRecord.watched`: its answers changed with the
    /// prompt's size before); another goes on unaudited, and the run says its answers are unproven.
    /// A watched model's sizes that hold are sampled at twice the rate, within `max_share` of the
    /// run apart from what proving them cost: a size it proved by luck is found out while the run
    /// can still ask its answers again.
    mutating func withAudits(_ calls: [PlannedCall]) throws(OffpeakError) -> [PlannedCall]? {
        guard audits, calls.contains(where: \.isBatched) else { return calls }
        audit.batched = true
        let now = Date()
        let fresh = SequentialTest(agree: spec.auditTarget)
        var share = try auditShare()
        var probes: [String: Int] = [:]
        var tails: [String: Int] = [:]  // tail audits the round's probes of a size carry so far
        var headed: Set<String> = []
        var claimed: [String: Bool] = [:]  // whether this process probes each size (`claimProbe`)
        var elsewhere: [ProbeKey] = []  // sizes another process probes, whose verdict the live lane waits for
        var kept: [PlannedCall] = []
        for var call in calls {
            guard call.isBatched, !call.requests.contains(where: \.isStep), let first = call.requests.first
            else {
                kept.append(call)
                continue
            }
            let size = call.requests.count
            let model = call.request.model
            let record = auditRecord(of: model)
            let costs = auditCosts(call)
            let runLeft = runLeft(share, costs: costs)
            let watched = record?.watched == true
            if let record, record.holds(size: size, at: now) {
                let rate = spec.auditing.rate * (watched ? 2 : 1)
                call.auditing = AuditSampling.sampledPlaces(size: size, firstRequestID: first.id, rate: rate)
                    .filter {
                        share.admits(
                            [costs.single($0)], runLeft: runLeft, within: spec.auditing.maxShare,
                            apart: watched)
                    }
                kept.append(call)
                continue
            }
            let key = "\(model)\u{0}\(size)"
            let evidence = record?.evidence(size: size, at: now)
            let agreements =
                record?.agreementsToProve(size: size, at: now) ?? fresh.agreementsToProve(from: 0)
            let wanted = AuditSampling.probes(
                size: size, agreements: agreements, whole: lanes.batchAPI != nil)
            guard probes[key, default: 0] < wanted else {
                if lanes.batchAPI != nil { kept.append(call) }  // else it waits for the probes' verdict
                continue
            }
            // A size is probed by one process at a time, across hosts: another's verdict is waited
            // for as this pass's own would be.
            let probe = ProbeKey(
                job: spec.name, provider: context.provider.kind.rawValue, model: model, size: size)
            if claimed[key] == nil { claimed[key] = try claimsProbe(probe) }
            guard claimed[key] == true else {
                if lanes.batchAPI != nil {
                    kept.append(call)
                } else if !elsewhere.contains(probe) {
                    elsewhere.append(probe)
                }
                continue
            }
            let head = (evidence?.head.audited ?? 0) == 0 && !headed.contains(key)
            let round = AuditSampling.roundAudits(agreements: agreements, whole: lanes.batchAPI != nil)
            let places = AuditSampling.probePlaces(
                size: size, head: head, most: round - tails[key, default: 0])
            guard
                share.admits(places.map { costs.single($0) }, runLeft: runLeft, within: spec.auditing.proving)
            else {
                if (evidence?.evidence ?? 0) > 0 || (watched && size > 2) {
                    try backOff(model: model, size: size)
                    return nil
                }
                kept.append(call)  // the proving share is spent: unaudited, its answers unproven
                continue
            }
            if places.contains(0) { headed.insert(key) }
            if probes[key] == nil {
                let news =
                    "probing batched prompts of \(size) items to \(model): each audited at its last "
                    + "\(Plural.count(AuditSampling.tail(size: size).count, "place")) "
                    + "(\(Plural.count(agreements, "agreeing audit")) would show the size holds up)"
                context.logger.info("\(news)")
            }
            probes[key, default: 0] += 1
            tails[key, default: 0] +=
                places.filter { AuditEvidence.isTail(position: $0 + 1, size: size) }.count
            call.auditing = places
            call.auditProbe = true
            kept.append(call)
        }
        // Nothing to send but what waits for another process's probes: wait for their verdict, then
        // pack the round again by it.
        if kept.isEmpty, !elsewhere.isEmpty, awaitProbes(elsewhere) { return nil }
        return kept
    }

    /// Claims the probing of `key` for this process (`AuditStore.claimProbe`), for as long as its
    /// hold on the run lives; false when another process probes it.
    private func claimsProbe(_ key: ProbeKey) throws(OffpeakError) -> Bool {
        let holder = try context.store.audits.claimProbe(
            key, owner: context.lease.owner, host: context.host, ttl: context.lease.ttl, now: Date())
        if let holder {
            let meanwhile =
                lanes.batchAPI != nil ? "these go unaudited beside its probes" : "waiting for its verdict"
            context.logger.info(
                "\(holder) is probing batched prompts of \(key.size) items to \(key.model): \(meanwhile)")
        }
        return holder == nil
    }

    /// Waits until no other process probes any of `keys` (it reached a verdict, or ended), asking
    /// the store at a doubling interval up to `Self.longestBudgetPoll`.
    /// - Returns: false when a stop was asked for first.
    private func awaitProbes(_ keys: [ProbeKey]) -> Bool {
        var poll = Self.budgetPoll
        while true {
            if let stop = options.stop, stop.isRequested { return false }
            let probed = keys.contains { (try? context.store.audits.prober(of: $0, now: Date())) != nil }
            if !probed { return true }
            Thread.sleep(forTimeInterval: poll)
            poll = min(poll * 2, Self.longestBudgetPoll)
        }
    }

    /// What the run's line says of the audit (`AuditNews.runClause`): the answers it replaced, and
    /// how the size the job's prompts carry stands, once this pass sent batched calls.
    func auditClause() throws(OffpeakError) -> String? {
        guard audits else { return nil }
        let store = context.store.audits
        let replaced = try store.replacedAnswers(job: spec.name, runID: run.id)
        var standing: AuditRecord.Standing?
        if audit.batched,
            let record = try store.auditRecord(
                job: spec.name, provider: context.provider.kind.rawValue, model: run.model),
            record.matches(shape: spec.auditShape, target: spec.auditTarget)
        {
            standing = record.standing(at: Date())
        }
        return AuditNews.runClause(standing, replaced: replaced, target: spec.auditTarget)
    }

    /// Backs prompts of `size` items to `model` off (`AuditRecord.backOff`): the audit's proving
    /// share ran out before they were shown to hold, and their evidence leans to changed answers.
    /// The run's answers from such prompts that no audit checked are asked again.
    private mutating func backOff(model: String, size: Int) throws(OffpeakError) {
        let now = context.clock()
        let (shape, target) = (spec.auditShape, spec.auditTarget)
        let change = AuditChange(
            job: spec.name, provider: context.provider.kind.rawValue, model: model, at: now
        ) {
            $0.adopt(shape: shape, target: target)
            $0.backOff(size: size, kind: .backedOff, at: now)
        }
        guard let after = try context.store.audits.commitAudit(AuditCommit(ledger: nil, change: change))
        else { return }
        audit.reads.keep(after, for: model, at: now)
        if let decision = after.decisions.last {
            context.logger.info("\(AuditNews.line(decision, model: model))")
        }
        try reaskOversized(model: model)
    }

    /// What auditing `call`'s items may cost, with the provider's prompt cache.
    func auditCosts(_ call: PlannedCall) -> AuditCosts {
        AuditCosts(
            call: call, price: context.prices.cost(of: call.request.model),
            cachedPrefix: PromptCacheMinimum.cachedPrefix(of: call.request, provider: context.provider.kind)
                ?? 0)
    }

    /// What the run's items not answered yet should cost, at `share`'s cost per item so far (or
    /// `costs`' estimate of a batched item before any is done).
    func runLeft(_ share: AuditShare, costs: AuditCosts) -> AuditShare.Cost {
        let remaining = max(0, run.itemsTotal - run.itemsDone - run.itemsFailed)
        return share.perItem(done: run.itemsDone, estimate: costs.batchedItem) * Double(remaining)
    }

    /// The room the audit has in the run's spend (`JobSpec.Audit.maxShare`), the audit calls
    /// queued counted in. Processes answering the run side by side (hosts helping it, each with
    /// a live claim on a round) each queue audits of their own that the others cannot see until
    /// they are made: each takes its part of the room.
    mutating func auditShare() throws(OffpeakError) -> AuditShare {
        // Read once a round, and kept for the round's gate (`spentSoFar`).
        let spent = try spentSoFar(batch: false)
        let audited = try auditSpent()
        let others = try context.store.leases.liveClaims(
            runID: run.id, except: context.lease.owner, now: Date())
        var share = AuditShare(
            others: AuditShare.Cost(spent) - AuditShare.Cost(audited), audited: AuditShare.Cost(audited),
            proving: AuditShare.Cost(audit.proving), queued: audit.queued,
            workers: 1 + Set(others.map(\.owner)).count)
        let answered = audited.calls - audited.failedCalls
        if answered > 0 { share.perAudit = AuditShare.Cost(audited) * (1 / Double(answered)) }
        return share
    }

    mutating func auditSpent() throws(OffpeakError) -> Spend {
        if let spent = audit.spent { return spent }
        let spent = try context.store.audits.auditSpend(job: spec.name, runID: run.id)
        audit.spent = spent
        return spent
    }
}
