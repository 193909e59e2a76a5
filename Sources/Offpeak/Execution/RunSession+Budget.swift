import Foundation

/// The workspace's and the job's daily and monthly budgets, as a pass meets them before each call.
extension RunSession {
    /// Reserves a call's (or a provider batch request's) worst case against the budgets, in the
    /// store, so every process counts it before it is sent (`Store.reserveBudget`).
    ///
    /// A refused call waits while what holds the budget may still give some back: this pass's own
    /// calls in flight are committed one by one (their real cost is mostly below their worst
    /// case), and other processes' calls in flight are waited for. Only when spent money alone
    /// leaves no room does the pass stop, and the job waits in the deferred queue for the next day
    /// (or month).
    /// A call is written down so even without a budget (`LostCalls`): its reservation carries the
    /// ledger row it leaves if this process dies with it in flight.
    /// - Parameters:
    ///   - calls: this pass's calls in flight; `nil` for a provider batch's requests.
    ///   - lost: the call's ledger row should it be lost in flight; nil for a provider batch's request.
    /// - Returns: the reservation's id (`nil` for a batch request when no budget is set), or why the
    ///   pass stops.
    mutating func reserve(_ worst: CallsInFlight.Worst, lost: LedgerEntry?, settling calls: CallsInFlight?)
        throws(OffpeakError) -> (id: Int64?, stop: RunStop?)
    {
        guard context.budget.isSet || lost != nil else { return (nil, nil) }
        let ask = BudgetAsk(
            job: spec.name, runID: run.id, owner: context.lease.owner, host: context.host,
            dollars: worst.dollars,
            tokens: worst.inputTokens + worst.outputTokens, call: lost)
        var poll = Self.budgetPoll
        while true {
            let refusal: BudgetRefusal
            switch try context.store.ledger.reserveBudget(ask, limits: context.budget, now: context.clock()) {
            case .success(let id): return (id, nil)
            case .failure(let refused): refusal = refused
            }
            if let calls, calls.count > 0 {
                if let done = calls.next(), let stop = try settle(done, calls) { return (nil, stop) }
                continue
            }
            if let stop = admit.refusalStop(refusal, now: Date()) { return (nil, stop) }
            Thread.sleep(forTimeInterval: poll)
            poll = min(poll * 2, Self.longestBudgetPoll)
        }
    }

    /// How soon a call refused for other processes' calls in flight first asks again; each ask is
    /// a write transaction, so the wait doubles up to `longestBudgetPoll` while a slow call (a local
    /// model's, minutes long) holds the budget.
    static var budgetPoll: TimeInterval { 0.1 }
    static var longestBudgetPoll: TimeInterval { 2 }
}
