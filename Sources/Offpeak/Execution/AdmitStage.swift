import Foundation

/// The run's admit stage (DESIGN.md's data flow: plan, then admit): whether a planned call may
/// start. The gate decides on the run's budgets, a stop, the window and the conditions, with the
/// worst case of the calls in flight counted as spent; the provider's limits may hold the call past
/// the window; a budget reservation refused may wait for calls in flight or stop the run. The pass
/// (`RunSession.start`) does the waiting, committing calls as they come back; the stage decides.
struct AdmitStage {
    let gate: CallGate
    /// Why no call may start (the job's conditions do not hold): the pass books what its provider
    /// batches answered, then stops with this if work is left.
    let holdCalls: RunStop?
    /// Models already warned about as having no price.
    private var unpriced: Set<String> = []

    init(gate: CallGate, holdCalls: RunStop? = nil) {
        self.gate = gate
        self.holdCalls = holdCalls
    }

    /// The gate's decision for `call`.
    /// - Parameters:
    ///   - spent: the run's spend, as committed (and sent).
    ///   - inFlight: the worst case of the calls in flight (or the batches out), counted as spent.
    ///   - lane: the call's lane: its prices; a provider batch has no window to fit.
    ///   - cacheTTL: how long the call's cacheable prefix may be kept: what writing it may cost.
    ///   - conditions: the machine's conditions now, read only when needed.
    ///   - latency: the model's measured speed, read only when a window needs it.
    func decide(
        _ request: CompletionRequest, price: ModelPrice?, spent: Spend, inFlight: Spend, lane: CallLane,
        cacheTTL: PromptCacheTTL?, callsMade: Int, now: Date, conditions: () -> MachineConditions?,
        latency: (String) throws(OffpeakError) -> LatencyEstimate?
    ) throws(OffpeakError) -> CallGate.Decision {
        var spent = spent
        spent.calls += inFlight.calls
        spent.inputTokens += inFlight.inputTokens
        spent.outputTokens += inFlight.outputTokens
        spent.dollars += inFlight.dollars
        let inputTokens = TokenEstimator.inputTokens(request)
        return try gate.decide(
            CallGate.Call(
                model: request.model, price: price,
                worst: request.worstUsage(inputTokens: inputTokens, ttl: cacheTTL), lane: lane),
            spent: spent, callsMade: callsMade, now: now, conditions: conditions,
            expectedSeconds: { () throws(OffpeakError) -> Double? in
                // Creating a batch takes one short exchange, whatever the batch will take.
                if lane == .batch { return 0 }
                return try latency(request.model)?.expectedSeconds(
                    input: inputTokens, maxOutput: request.maxTokens)
            })
    }

    /// Whether calls to a model go one at a time until an answer measures how long one takes: the
    /// window planner needs that time to tell whether a call fits (`measured`: the store has one).
    func awaitsMeasurement(measured: Bool) -> Bool { gate.windowEnd != nil && !measured }

    /// The stop when the provider's limit (`reason`) holds the next call until `until`, after the
    /// window's end; nil: the call waits.
    func limitStop(until: Date, reason: CallLimiter.WaitReason) -> RunStop? {
        guard let end = gate.windowEnd, until > end else { return nil }
        return RunStop(
            state: .interrupted,
            reason:
                "the provider's limit (\(reason.rawValue)) holds the next call until \(Timestamp.text(until)), "
                + "after the window",
            status: .temporaryFailure)
    }

    /// What a refused budget reservation does once no call of this pass is in flight to give some
    /// back: the run stops when spent money alone leaves no room (the job waits in the deferred
    /// queue for the next day or month), when a stop was asked for, or when the window ended;
    /// nil: other processes' calls in flight hold the budget, and the call asks again.
    func refusalStop(_ refusal: BudgetRefusal, now: Date) -> RunStop? {
        guard refusal.waitsForCallsInFlight else { return Self.budgetStop(refusal) }
        if let stop = gate.stop, stop.isRequested { return .signal(stop.reason) }
        if let end = gate.windowEnd, end <= now {
            let reason = "the window ended while other calls in flight held the budget: \(refusal.reason)"
            return RunStop(state: .interrupted, reason: reason, status: .temporaryFailure)
        }
        return nil
    }

    /// The run waits in the deferred queue with the budget's reason ("daily budget reached,
    /// resumes after 00:00 (...)"); every tick tries it again, so it resumes by itself.
    static func budgetStop(_ refusal: BudgetRefusal) -> RunStop {
        RunStop(state: .waiting, reason: refusal.reason, status: .temporaryFailure, deferred: [.budget])
    }

    /// Whether `model` (whose price is `price`) is to be warned about as having none: once a pass.
    mutating func warnsUnpriced(_ model: String, price: ModelPrice?) -> Bool {
        price == nil && unpriced.insert(model).inserted
    }
}
