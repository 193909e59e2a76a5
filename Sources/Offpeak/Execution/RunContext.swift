import Foundation
import Logging

/// What a pass over a run works with, handed to it whole: the pass never reaches back into what
/// made it. `JobRunner` builds one per run.
struct RunContext: Sendable {
    // One field per collaborator of the pass (store, cache, provider, limits, clock, ...): a
    // bundle handed whole, so the pass never reaches back into what made it.
    let store: Store
    let cache: ResponseCache
    /// The provider its calls go to: the configured one, or the fallback answering while it cannot
    /// (`RunSession.chooseRoute`).
    var provider: any CompletionProvider
    let prices: PriceTable
    let logger: Logger
    /// How this process holds the run (its lease, or only its claims: a helper), renewed with
    /// every commit.
    let lease: RunHold
    /// The host this process runs on (`HostName`): every lease, reservation and ledger row it
    /// writes names it.
    let host: String
    /// The folder the run's outputs are written to.
    let outputs: URL
    /// Keeps the calls in flight within the provider's limits.
    var limiter: CallLimiter
    /// The job's fallback chain, the configured provider first; nil when it has none.
    var chain: FallbackChain?
    /// How long a call may take: longer than `http.timeout` for a slow model's long answer.
    let callTimeout: CallTimeout
    /// Whether batched prompts ask for the provider's structured-output form (offpeak.yaml).
    var structuredOutput: StructuredOutput = .auto
    /// The workspace's and the job's daily and monthly budgets, reserved against before each call.
    var budget = BudgetLimits(workspace: WorkspaceBudget())
    /// What the budgets take as now (which day and month a call counts in, and its ledger row's
    /// time); tests move it to the next day.
    var clock: @Sendable () -> Date = { Date() }
    /// The moment the provider billed `done`, on the run's clock (moved as far as it is from the
    /// machine's: `tick --now`): when the call ended here, to the millisecond, unless the
    /// provider's own clock (its answer's `Date`, `CallReply.servedAt`, whole seconds) says
    /// otherwise by more than `clockSkew`: then this machine's clock is wrong, and the provider's
    /// is what it bills by. A call is priced wholly as of then: one that straddles a change of
    /// prices is billed at those in force as it ended, as LiteLLM prices a call at its response
    /// (docs/budgets-and-costs.md, "Prices that change with the clock").
    func billedAt(_ done: CallsInFlight.Finished) -> Date {
        var at = done.ended
        if let served = done.reply.servedAt, abs(served.timeIntervalSince(at)) > Self.clockSkew {
            at = served
        }
        return at.addingTimeInterval(clock().timeIntervalSinceNow)
    }

    /// Gives back what the pass's limiters held and did not use: the route's it sends to, and every
    /// other route's of the chain.
    func flushLimiters() {
        try? limiter.flush(now: Date())
        for route in chain?.routes ?? [] where route.limiter !== limiter {
            try? route.limiter.flush(now: Date())
        }
    }

    /// How far the provider's `Date` may be from this machine's clock before it is believed
    /// instead: it is whole seconds, and a server may stamp it a second late.
    static let clockSkew: TimeInterval = 2

    /// The models' measured speeds as read lately (`latency(of:)`).
    let latencies = RecentReads<LatencyEstimate>()

    /// `model`'s measured speed in `lane` (nil: none measured yet), read from the store at most
    /// once a second: each call's timeout and window check ask for it.
    func latency(of model: String, lane: CallLane = .live) throws(OffpeakError) -> LatencyEstimate? {
        let key = LatencyEstimate.key(model: model, lane: lane)
        return try latencies.value(for: key, now: Date()) { () throws(OffpeakError) in
            try store.ledger.latency(model: key)
        }
    }
}

/// Why a pass ended before its run was done, and what that makes of the run.
struct RunStop: Equatable, Sendable {
    var state: RunState
    var reason: String
    var status: ExitStatus
    /// The conditions that stopped it, for the deferred queue.
    var deferred: [ConditionGate.Reason] = []

    /// A stop request (SIGTERM, SIGINT, SIGHUP): the run resumes from its checkpoint.
    static func signal(_ name: String?) -> RunStop {
        RunStop(state: .interrupted, reason: "stopped by \(name ?? "a signal")", status: .temporaryFailure)
    }
}

extension Store {
    /// Moves `run` to `state`, refusing transitions `RunState` does not allow, and saves it.
    func move(_ run: inout RunRecord, to state: RunState, reason: String?) throws(OffpeakError) {
        do { try run.move(to: state, reason: reason, at: Date()) } catch {
            throw OffpeakError(.software, error.description)
        }
        try runs.update(run: run)
    }
}
