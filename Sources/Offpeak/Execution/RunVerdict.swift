/// Where a pass leaves its run, and what to tell the user: the stop that ended it if one did, else
/// what its requests say — items retrying later, items waiting for their sources, items failed,
/// or everything answered.
struct RunVerdict: Equatable, Sendable {
    var state: RunState
    /// The run's reason (`nil` when it completed).
    var reason: String?
    var status: ExitStatus
    var message: String
    /// The stop's conditions, for the deferred queue.
    var deferred: [ConditionGate.Reason] = []

    /// What the pass saw of its run when it ended.
    struct Facts: Sendable {
        // One field per fact the verdict's sentence may name: a record, not a state.
        var job: String
        var itemsDone: Int
        var itemsTotal: Int
        var itemsFailed: Int
        var answeredNow: Int
        /// The retrying request whose next attempt comes first, and how many retry.
        var nextRetry: (error: String?, count: Int)?
        /// The first waiting request's reason, and how many wait.
        var firstWaiting: (error: String?, count: Int)?
        /// The first failed request's reason.
        var firstFailure: String?
        /// Conditions `--force` ran past, and notices for the user (a changed spec's dropped items).
        var forcedPast: [ConditionGate.Reason] = []
        var notices: [String] = []
        /// Items still to be sent: a pass that ends with any, and no stop to say why, must not pass
        /// for a finished run.
        var pending = 0
        /// Items out in provider batches, and how many of them this pass submitted.
        var inBatch = 0
        var submittedNow = 0
        /// A batch of the run whose polls keep failing (`BatchRecord.isFailing`): how many times in
        /// a row, and the last reason.
        var failingBatch: (failures: Int, reason: String)?
        /// The user canceled the run (`offpeak cancel`).
        var canceled = false
        /// What the batch audit has to say of the run's answers (`AuditNews.runClause`).
        var audit: String?
        /// Items this pass's fallbacks answered (`FallbackChain.Answered.clause`).
        var fallbacks: String?
        /// Answers kept though cut off at `max_tokens`: how many, and what ended the first.
        var cutOff: (count: Int, first: String)?
        /// Items not asked, as the spec says (`robots: skip`): how many, and why the first was.
        var skipped: (count: Int, first: String)?
    }

    static func decide(_ facts: Facts, stop: RunStop?) -> RunVerdict {
        let counts =
            "\(facts.itemsDone) of \(Plural.count(facts.itemsTotal, "item")) answered (\(facts.answeredNow) now)"
        let job = facts.job
        var verdict: RunVerdict
        if let stop {
            let message =
                stop.deferred.isEmpty
                ? "job \(job): \(stop.reason); \(counts)"
                : "job \(job) deferred part-way (\(stop.reason)); \(counts); `offpeak tick` goes on once "
                    + (stop.deferred == [.budget] ? "the budget allows" : "they hold")
            verdict = RunVerdict(
                state: stop.state, reason: stop.reason, status: stop.status,
                message: message + (stop.state == .interrupted ? "; run it again to do the rest" : ""),
                deferred: stop.deferred)
        } else if facts.canceled {
            let why = Store.cancelReason(inBatch: facts.inBatch)
            verdict = RunVerdict(
                state: facts.inBatch > 0 ? .waiting : .canceled, reason: why,
                status: facts.inBatch > 0 ? .temporaryFailure : .ok, message: "job \(job): \(why); \(counts)")
        } else if facts.inBatch > 0 {
            // Collected by a later pass: the run waits, as it does for a source not fetched yet.
            var why = "\(Plural.count(facts.inBatch, "item")) in a provider batch"
            let submitted = facts.submittedNow > 0 ? "submitted \(facts.submittedNow) now, " : ""
            var next = " (\(submitted)collect with the next tick, or `offpeak run --wait`)"
            if let failing = facts.failingBatch {
                why += " whose polls failed \(failing.failures) times in a row: \(failing.reason)"
                next = "; each tick asks again"
            }
            verdict = RunVerdict(
                state: .waiting, reason: why, status: .temporaryFailure,
                message: "job \(job): \(counts); \(why)\(next)")
        } else if facts.pending > 0 {
            // Nothing stopped the pass, yet work is left: the run is resumable, never completed.
            let why = "\(Plural.count(facts.pending, "item")) not sent yet"
            verdict = RunVerdict(
                state: .interrupted, reason: why, status: .temporaryFailure,
                message: "job \(job): \(counts); \(why); run it again to do the rest")
        } else if let retry = facts.nextRetry {
            let why = "\(Plural.count(retry.count, "item")) retrying; next \(retry.error ?? "soon")"
            verdict = RunVerdict(
                state: .interrupted, reason: why, status: .temporaryFailure,
                message: "job \(job): \(counts); \(why)")
        } else if let waiting = facts.firstWaiting {
            // Items whose sources cannot be fetched yet wait for a later run; the rest is done.
            let why =
                "\(Plural.count(waiting.count, "item")) \(waiting.count == 1 ? "waits" : "wait"): "
                + (waiting.error ?? "not ready")
            verdict = RunVerdict(
                state: .waiting, reason: why, status: .temporaryFailure,
                message: "job \(job): \(counts); \(why); run it again once they can be fetched")
        } else if facts.itemsFailed > 0 {
            let first = facts.firstFailure ?? "unknown"
            verdict = RunVerdict(
                state: .failed, reason: "\(Plural.count(facts.itemsFailed, "item")) failed; first: \(first)",
                status: .unavailable,
                message: "job \(job): \(counts), \(facts.itemsFailed) failed (first: \(first))")
        } else {
            // Items skipped and answers cut off (kept: they were paid for) do not keep a run from
            // being done; its reason says so.
            verdict = RunVerdict(
                state: .completed, reason: facts.notes, status: .ok, message: "job \(job): \(counts)")
        }
        if let notes = facts.notes { verdict.message += "; " + notes }
        if !facts.forcedPast.isEmpty {
            verdict.message = "forced past: \(facts.forcedPast.sentence) (--force); " + verdict.message
        }
        for notice in facts.notices.reversed() { verdict.message = notice + "; " + verdict.message }
        if let fallbacks = facts.fallbacks { verdict.message += "; " + fallbacks }
        if let audit = facts.audit { verdict.message += "; " + audit }
        return verdict
    }
}

extension RunVerdict.Facts {
    /// What a run's line and reason add of items skipped and answers cut off; nil when there were
    /// none: `1 item skipped (first: source … is disallowed by its site's robots.txt for offpeak);
    /// 2 answers cut off, kept as they are and marked in index.json (first: answer cut off at
    /// max_tokens (80); raise max_tokens in the spec)`.
    var notes: String? {
        let skipped = skipped.map { "\(Plural.count($0.count, "item")) skipped (first: \($0.first))" }
        let cutOff = cutOff.map {
            "\(Plural.count($0.count, "answer")) cut off, kept as \($0.count == 1 ? "it is" : "they are") "
                + "and marked in index.json (first: \($0.first))"
        }
        let notes = [skipped, cutOff].compactMap { $0 }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }
}
