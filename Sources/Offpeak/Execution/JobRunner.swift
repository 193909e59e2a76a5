import Foundation
import Logging

/// Runs a job: plans its requests, resumes its unfinished run or starts one, sends each request
/// inside the run's budget, commits every answer with its checkpoint, and writes the outputs.
public struct JobRunner: Sendable {
    /// How a pass runs, as the CLI and tick ask: one field per option.
    public struct Options: Sendable {
        var force = false
        /// `no-cache` or `refresh` for every request of this run (`run --no-cache`, `--refresh`).
        var cachePolicy = RequestRecord.CachePolicy.normal
        var progress: (@Sendable (RunProgress) -> Void)?
        /// Where the machine's conditions are read; `nil` runs without looking (library callers
        /// that have no constraints to check).
        var gate: ConditionGate?
        /// The end of the tick's window: a call starts only if it is expected to finish by then.
        /// A job's own `window` can end a pass sooner.
        var windowEnd: Date?
        /// Whether the pass's first call starts whatever the window says, so every tick makes
        /// progress; a tick clears it once an earlier job of the tick has made a call.
        var firstCallAlwaysStarts = true
        /// Raised by SIGTERM/SIGINT: no new call starts.
        var stop: StopSignal?
        /// `run --wait`: a pass whose calls went in provider batches stays until they are collected.
        var waitForBatches = false
        /// The most stored requests one round of the pass reads and plans (see
        /// `RunSession.nextCalls`); smaller only in tests.
        var roundRequests = 1024
        /// What the run takes as now for the cache (answers' and research sources' TTLs), the
        /// ledger's day and the budgets': the machine's clock, but for a tick whose clock a test
        /// moved (`tick --now`: days of a daily job in a minute), and library tests moving it to
        /// the next day. Leases, windows and calls keep the machine's clock.
        var clock: @Sendable () -> Date = { Date() }
        /// The unfinished run a tick picked the job for. When no run of the job is open as the pass
        /// opens it (its holder finished it between the tick's reads), the pass starts none: a new
        /// run would answer the job a second time.
        var resuming: RunRecord?

        /// - Parameter now: the moment the run takes as now (`run --now`), its clock going on from
        ///   there at the machine's pace; nil: the machine's clock.
        public init(
            force: Bool = false, cachePolicy: RequestRecord.CachePolicy = .normal,
            progress: (@Sendable (RunProgress) -> Void)? = nil, gate: ConditionGate? = nil,
            windowEnd: Date? = nil, stop: StopSignal? = nil, waitForBatches: Bool = false, now: Date? = nil
        ) {
            clock = MovedClock.from(now)
            self.waitForBatches = waitForBatches
            self.force = force
            self.cachePolicy = cachePolicy
            self.progress = progress
            self.gate = gate
            self.windowEnd = windowEnd
            self.stop = stop
        }
    }

    // What a pass needs from the workspace, a field each: each pass's `RunContext` is built from them.
    let workspace: Workspace
    let config: WorkspaceConfig
    let store: Store
    let cache: ResponseCache
    let provider: any CompletionProvider
    let prices: PriceTable
    let logger: Logger
    let owner: String
    /// The host this process runs on (`HostName`), recorded with its leases, reservations and ledger rows.
    let host: String
    /// Keeps calls within the provider's limits; `nil`: a new one per run, from `offpeak.yaml`.
    var limiter: CallLimiter?
    /// Each tier's fallbacks, made (`fallbacks:`); a tier with none has no chain.
    var fallbacks: [JobSpec.Tier: [FallbackChain.Step]] = [:]
    /// A lease outlives a silent owner by this long before another process may take the run
    /// (`lease:` in offpeak.yaml).
    var leaseTTL: TimeInterval { config.leaseTTL }
    /// This process's claim on the run, renewed with every commit.
    var lease: RunHold { RunHold(owner: owner, ttl: leaseTTL) }

    init(
        workspace: Workspace, config: WorkspaceConfig, store: Store, provider: any CompletionProvider,
        prices: PriceTable, logger: Logger, host: String
    ) {
        self.workspace = workspace
        self.config = config
        self.store = store
        self.cache = ResponseCache(store: store, maxBytes: config.cacheMaxBytes, logger: logger)
        self.provider = provider
        self.prices = prices
        self.logger = logger
        self.owner = Store.processOwner
        self.host = host
    }

    func run(_ spec: JobSpec, options: Options = Options()) throws(OffpeakError) -> RunOutcome {
        let options = Self.windowed(options, spec)
        let conditions = options.gate?.read()
        let (failing, sentence) = try Self.failing(spec, conditions)
        // Work already paid for is collected whatever the conditions: a run with provider batches
        // out has its pass, which books what they answered and sends nothing new.
        var holdCalls: RunStop?
        if !failing.isEmpty && !options.force {
            try checkModel(config.model(for: spec.tier, provider: provider.kind), tier: spec.tier, for: spec)
            guard try hasBatchesOut(job: spec.name) else {
                return try deferRun(spec, reasons: failing, sentence: sentence, resuming: options.resuming)
            }
            holdCalls = RunStop(
                state: .waiting, reason: sentence, status: .temporaryFailure, deferred: failing)
        }
        let downgraded = conditions.map { ConditionGate.downgrades(spec, $0) } ?? false
        let tier = downgraded ? spec.tier.lower : spec.tier
        let model = config.model(for: tier, provider: provider.kind)
        try checkModel(model, tier: tier, for: spec)
        let pricePlan = try pricePlan(spec, model: model, options: options)
        if let wait = pricePlan.wait, holdCalls == nil {
            guard try hasBatchesOut(job: spec.name) else {
                return try deferRun(
                    spec, reasons: [.cheaperPrices], sentence: wait, resuming: options.resuming,
                    then:
                        "`offpeak tick` runs it when they begin, `offpeak run --force` runs it now at today's prices",
                    deferredAt: options.clock())
            }
            holdCalls = RunStop(
                state: .waiting, reason: wait, status: .temporaryFailure, deferred: [.cheaperPrices])
        }
        if let note = Self.samplingNote(spec, model: model, provider: provider.kind) {
            logger.info("\(note)")
        }
        let (spec, dropped) = try withUnfinishedItems(
            try withFeedItems(
                spec, offline: holdCalls != nil, cancellation: options.stop?.calls, now: options.clock()))
        let planned = RequestPlanner(provider: provider.kind, model: model).plan(
            spec,
            sources: try sources(
                for: spec, offline: holdCalls != nil, cancellation: options.stop?.calls, now: options.clock())
        )
        guard
            let prepared = try prepareRun(
                spec: spec, model: model, planned: planned, forced: options.force,
                onlyResuming: options.resuming != nil)
        else { return try closedMeanwhile(spec, options.resuming) }
        var (run, droppedNow) = prepared
        // Another process holds the run: this one helps it answer its requests.
        if try store.leases.acquireLease(runID: run.id, owner: owner, host: host, ttl: leaseTTL) != nil {
            return try help(spec, run: run, options: options)
        }
        defer {
            try? store.audits.releaseProbes(owner: owner, key: nil)
            try? store.leases.releaseClaim(runID: run.id, owner: owner)
            try? store.leases.releaseLease(runID: run.id, owner: owner)
        }
        run.tier = tier.rawValue
        run.downgraded = downgraded
        if downgraded {
            logger.info(
                "on battery or in a low-power profile: \(spec.name) runs as \(tier.rawValue) (\(model))")
        }
        let waitedFrom = pricePlan.watch == nil ? nil : try waitedForPrices(job: spec.name)
        try move(&run, to: .running, reason: nil)
        try store.schedules.releaseDeferred(job: spec.name, at: Date())
        let context = self.context(for: spec, hold: lease, options: options, tier: tier, model: model)
        defer { context.flushLimiters() }  // what the pass held and did not use goes back
        let lane = LaneChoice.choose(
            spec: spec, model: run.model, prices: prices, workspaceLane: config.lane,
            batchAPI: config.batchAPI,
            provider: provider,
            deadlineAt: run.deadlineAt, now: Date())
        var session = RunSession(
            context: context, spec: spec, run: run, options: options, lanes: lane, holdCalls: holdCalls,
            canceled: try store.runs.isCanceled(runID: run.id))
        if !failing.isEmpty && options.force { session.tally.forcedPast = failing }
        session.liveCacheTTL = PromptCacheTTL.forLive(spec, now: options.clock())
        session.prices = pricePlan.watch
        if let waitedFrom, waitedFrom < options.clock() {
            session.prices?.waited = DateInterval(start: waitedFrom, end: options.clock())
        }
        if let note = pricePlan.note {
            logger.info("job \(spec.name) \(note)")
            session.tally.notices.append("job \(spec.name) \(note)")
        }
        if let why = lane.why { logger.info("job \(spec.name): \(why)") }
        if let notice = Self.droppedNotice(dropped + droppedNow, spec: spec) {
            logger.warning("\(notice)")
            session.tally.notices.append(notice)
        }
        let outcome = try session.execute()
        try cache.flush()
        return outcome
    }

    /// `options` with the end of the job's own `window` when it ends before the tick's.
    static func windowed(_ options: Options, _ spec: JobSpec) -> Options {
        var options = options
        if let window = spec.window {
            let end = Date() + window
            options.windowEnd = min(options.windowEnd ?? end, end)
        }
        return options
    }

    /// The job's constraints that do not hold in `conditions` (none when nothing was read), and
    /// the sentence that says so. The job's own constraints gate the whole run; being offline only
    /// stops calls (see `CallGate`), so cached answers and outputs still go on. A reading the job
    /// needs that could not be made defers it like a condition that does not hold, naming the file.
    /// - Throws: when the sysfs root is not one (a wrong --sysfs-root): it decides nothing for any job.
    static func failing(_ spec: JobSpec, _ conditions: MachineConditions?) throws(OffpeakError)
        -> (reasons: [ConditionGate.Reason], sentence: String)
    {
        if let error = conditions?.rootError { throw error }
        let downgrades = ConditionGate.mayDowngrade(spec)
        let failing =
            conditions.map {
                ConditionGate.failing(spec.constraints, $0, needsNetwork: false, downgrades: downgrades)
            } ?? []
        let sentence = ConditionGate.sentence(
            failing,
            unread: conditions.flatMap {
                ConditionGate.unread(spec.constraints, $0, needsNetwork: false, downgrades: downgrades)
            })
        return (failing, sentence)
    }

    /// What a pass over a run of `spec` works with, holding the run as `hold` says, calling `model`
    /// of `tier` first (then its fallbacks). Limits the user set hold across every process on the
    /// store; the defaults are this one's.
    func context(for spec: JobSpec, hold: RunHold, options: Options, tier: JobSpec.Tier, model: String)
        -> RunContext
    {
        let limiter = self.limiter ?? makeLimiter(for: provider)
        var context = RunContext(
            store: store, cache: cache, provider: provider, prices: prices, logger: logger, lease: hold,
            host: host, outputs: workspace.url(for: spec.output), limiter: limiter,
            callTimeout: CallTimeout(floor: config.requestTimeout, connect: config.connectTimeout),
            structuredOutput: config.structuredOutput,
            budget: BudgetLimits(workspace: config.budget, jobPerDay: spec.budget.perDay),
            clock: options.clock)
        if let steps = fallbacks[tier], !steps.isEmpty {
            let primary = FallbackChain.ProviderRoute(
                step: FallbackChain.Step(provider: provider, model: model), limiter: limiter)
            let rest = steps.map {
                FallbackChain.ProviderRoute(step: $0, limiter: makeLimiter(for: $0.provider))
            }
            context.chain = FallbackChain(routes: [primary] + rest, retryAfter: config.retryPrimaryAfter)
        }
        return context
    }

    /// The limiter of `provider`'s calls, from `offpeak.yaml`'s limits.
    private func makeLimiter(for provider: any CompletionProvider) -> CallLimiter {
        CallLimiter(
            config.limits(for: provider.kind), provider: provider.kind, baseURL: provider.baseURL,
            sharedOn: store.limits, owner: owner, host: host)
    }
}
