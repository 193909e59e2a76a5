import Foundation

/// Whether the next call may start now (DESIGN.md, "How long work survives being stopped"): it
/// starts only if its worst case fits every budget, no stop was asked for, it fits the time left
/// in the window, and the job's conditions hold. Otherwise the run stops here, with everything
/// before it committed.
///
/// A value with no I/O of its own: what it needs to know is passed in, and the conditions and the
/// call's expected duration are read only when the cheaper checks have passed.
struct CallGate: Sendable {
    let budget: JobSpec.Budget
    let constraints: JobSpec.Constraints
    /// `--force`: past the job's constraints, not past a missing network.
    let force: Bool
    /// The provider is not on this machine, so a call needs a network.
    let needsNetwork: Bool
    let stop: StopSignal?
    /// The end of the pass's window, if it has one.
    let windowEnd: Date?
    /// Whether the pass's first call starts whatever the window says (so every tick makes progress).
    let firstCallAlwaysStarts: Bool

    /// What the gate knows of the call and of the run when it decides.
    struct Call {
        var model: String
        /// The call's price; `nil` when its model has none.
        var price: ModelPrice?
        /// The most the call may use (`CompletionRequest.worstUsage`).
        var worst: Usage
        /// The lane it goes in: its worst case is at that lane's prices; a provider batch has no
        /// window to fit.
        var lane = CallLane.live

        var inputTokens: Int { worst.totalInput }
        var maxOutputTokens: Int { worst.output }
        /// Web searches the call may run (`CompletionRequest.searchUses`).
        var searches: Int { worst.searches }
    }

    enum Decision: Equatable {
        case go
        /// The run stops; `budget` names the budget that stopped it, if one did.
        case stop(RunStop, budget: BudgetGuard.Limit? = nil)
    }

    /// - Parameters:
    ///   - spent: what the run has spent, with the worst case of calls in flight added.
    ///   - callsMade: calls this pass has started.
    ///   - conditions: the machine's conditions now, read only when needed (`nil`: not checked).
    ///   - expectedSeconds: how long the call is expected to take, read only when a window needs it.
    func decide(
        _ call: Call, spent: Spend, callsMade: Int, now: Date, conditions: () -> MachineConditions?,
        expectedSeconds: () throws(OffpeakError) -> Double?
    ) throws(OffpeakError) -> Decision {
        if call.price == nil, let limit = budget.maxDollars {
            // A dollar budget cannot stop a model whose calls cost an unknown amount.
            let reason =
                "\(call.model) has no price, so max_dollars (\(Money.dollars(limit))) could not stop it; "
                + PriceTable.howToPrice(call.model)
            return .stop(RunStop(state: .interrupted, reason: reason, status: .configuration))
        }
        if call.searches > 0, call.price?.perSearch == nil, let limit = budget.maxDollars {
            let reason =
                "\(call.model) has no price per web search, so max_dollars (\(Money.dollars(limit))) could not "
                + "stop its searches; " + PriceTable.howToPriceSearches(call.model)
            return .stop(RunStop(state: .interrupted, reason: reason, status: .configuration))
        }
        let worst = call.price?.worstDollars(for: call.worst, lane: call.lane)
        if let over = BudgetGuard(budget: budget).check(
            spent: spent, inputTokens: call.inputTokens, maxOutputTokens: call.maxOutputTokens,
            worstDollars: worst)
        {
            let stop = RunStop(
                state: .interrupted, reason: "stopped by budget \(over.message)", status: .temporaryFailure)
            return .stop(stop, budget: over.limit)
        }
        if let stop, stop.isRequested { return .stop(.signal(stop.reason)) }
        if let windowEnd,
            let stop = try windowStop(
                end: windowEnd, callsMade: callsMade, now: now, expectedSeconds: expectedSeconds)
        {
            return .stop(stop)
        }
        guard let conditions = conditions() else { return .go }
        var failing = ConditionGate.failing(constraints, conditions, needsNetwork: needsNetwork)
        if force { failing.removeAll { $0 != .offline } }
        guard !failing.isEmpty else { return .go }
        let unread = ConditionGate.unread(constraints, conditions, needsNetwork: needsNetwork)
        return .stop(
            RunStop(
                state: .waiting, reason: ConditionGate.sentence(failing, unread: unread),
                status: .temporaryFailure, deferred: failing))
    }

    /// A call starts only if its expected duration fits the time left; the first call of a pass
    /// starts anyway (unless the tick already made one), so every tick makes progress.
    private func windowStop(
        end: Date, callsMade: Int, now: Date, expectedSeconds: () throws(OffpeakError) -> Double?
    ) throws(OffpeakError) -> RunStop? {
        let left = end.timeIntervalSince(now)
        guard callsMade > 0 || !firstCallAlwaysStarts || left <= 0 else { return nil }
        let expected = try expectedSeconds()
        guard left <= 0 || (expected.map { $0 > left } ?? false) else { return nil }
        let need = expected.map { String(format: "%.1f s", $0) } ?? "unknown"
        return RunStop(
            state: .interrupted,
            reason:
                "window ends in \(String(format: "%.1f", max(0, left))) s; the next call needs about \(need)",
            status: .temporaryFailure)
    }
}
