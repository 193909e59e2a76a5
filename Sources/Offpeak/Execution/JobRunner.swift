import Foundation
import Logging

/// Runs a job: plans its requests, resumes its unfinished run or starts one, sends each request
/// inside the run's budget, commits every answer with its checkpoint, and writes the outputs.
public struct JobRunner: Sendable {
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
        public init(
            force: Bool = false, cachePolicy: RequestRecord.CachePolicy = .normal,
            progress: (@Sendable (RunProgress) -> Void)? = nil, gate: ConditionGate? = nil,
            windowEnd: Date? = nil, stop: StopSignal? = nil, waitForBatches: Bool = false
        ) {
            self.waitForBatches = waitForBatches
            self.force = force
            self.cachePolicy = cachePolicy
            self.progress = progress
            self.gate = gate
            self.windowEnd = windowEnd
            self.stop = stop
        }
    }

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
            try? store.leases.releaseClaim(runID: run.id, owner: owner)
            try? store.leases.releaseLease(runID: run.id, owner: owner)
        }
        run.tier = tier.rawValue
        run.downgraded = downgraded
        if downgraded {
            logger.info(
                "on battery or in a low-power profile: \(spec.name) runs as \(tier.rawValue) (\(model))")
        }
        try move(&run, to: .running, reason: nil)
        try store.schedules.releaseDeferred(job: spec.name, at: Date())
        let context = self.context(for: spec, hold: lease, options: options)
        defer { try? context.limiter.flush(now: Date()) }  // what the pass held and did not use goes back
        var session = RunSession(context: context, spec: spec, run: run, options: options)
        if !failing.isEmpty && options.force { session.forcedPast = failing }
        session.holdCalls = holdCalls
        let lane = LaneChoice.choose(
            spec: spec, model: run.model, prices: prices, workspaceLane: config.lane, provider: provider,
            deadlineAt: run.deadlineAt, now: Date())
        session.batchAPI = lane.api
        session.callLane = lane.callLane
        session.canceled = try store.runs.isCanceled(runID: run.id)
        if let why = lane.why { logger.info("job \(spec.name): \(why)") }
        if let notice = Self.droppedNotice(dropped + droppedNow, spec: spec) {
            logger.warning("\(notice)")
            session.notices.append(notice)
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

    /// What a pass over a run of `spec` works with, holding the run as `hold` says. Limits the user
    /// set hold across every process on the store; the defaults are this one's.
    func context(for spec: JobSpec, hold: RunHold, options: Options) -> RunContext {
        let limiter =
            self.limiter
            ?? CallLimiter(
                config.limits(for: provider.kind), provider: provider.kind, baseURL: provider.baseURL,
                sharedOn: store.limits, owner: owner, host: host)
        return RunContext(
            store: store, cache: cache, provider: provider, prices: prices, logger: logger, lease: hold,
            host: host, outputs: workspace.url(for: spec.output), limiter: limiter,
            callTimeout: CallTimeout(floor: config.requestTimeout, connect: config.connectTimeout),
            structuredOutput: config.structuredOutput,
            budget: BudgetLimits(workspace: config.budget, jobPerDay: spec.budget.perDay),
            clock: options.clock)
    }

    /// This process's lease on `run`, a run it creates: saved with the run (`RunStore.openRun`).
    private func newLease(_ run: RunRecord, at now: Date) -> LeaseRecord {
        LeaseRecord(
            runId: run.id, owner: owner, acquiredAt: now, heartbeatAt: now, expiresAt: now + leaseTTL,
            host: host)
    }

    /// Puts the job in the deferred queue, and its run (a new, empty one if it has none: its
    /// requests are planned when it runs) in `waiting`. Nothing is sent or dropped.
    private func deferRun(
        _ spec: JobSpec, reasons: [ConditionGate.Reason], sentence: String, resuming: RunRecord?
    ) throws(OffpeakError) -> RunOutcome {
        let now = Date()
        // A new run holds no requests yet: they are planned when it runs.
        let fresh = RunRecord.new(
            job: spec, provider: provider.kind, model: config.model(for: spec.tier, provider: provider.kind),
            itemsTotal: spec.items.count, at: now)
        guard
            var run = try store.runs.openRun(
                job: spec.name, creating: resuming == nil ? fresh : nil, requests: [],
                lease: resuming == nil ? newLease(fresh, at: now) : nil
            )?.run
        else { return try closedMeanwhile(spec, resuming) }
        try takeLease(run, job: spec.name)
        defer { try? store.leases.releaseLease(runID: run.id, owner: owner) }
        do { try run.move(to: .waiting, reason: sentence, at: now) } catch {
            throw OffpeakError(.software, error.description)
        }
        let deferred = try store.schedules.deferJob(
            spec.name, run: run, reasons: sentence, host: host, at: now)
        let since =
            deferred.deferredAt == now ? "" : " (deferred since \(Timestamp.text(deferred.deferredAt)))"
        return RunOutcome(
            run: run, status: .temporaryFailure,
            message: "job \(spec.name) deferred: \(sentence)\(since); `offpeak tick` runs it once "
                + "its conditions hold, `offpeak run --force` runs it now",
            spend: try store.ledger.spend(runID: run.id), outputDirectory: spec.output, answeredNow: 0,
            deferred: reasons)
    }

    private func takeLease(_ run: RunRecord, job: String) throws(OffpeakError) {
        if let holder = try store.leases.acquireLease(runID: run.id, owner: owner, host: host, ttl: leaseTTL)
        {
            throw OffpeakError(
                .temporaryFailure, "job \(job): run \(run.id) is being run by \(holder); try again later")
        }
    }

    /// The research context of every item that has sources (the job's, then its own), fetched or
    /// taken from the cache; an item whose source cannot be had yet waits. A stop signal aborts
    /// fetches in flight when its grace runs out, as it does provider calls. `offline` (the job's
    /// conditions do not hold, and the pass only collects batches already out) fetches nothing:
    /// cached copies only, and an item with a source never fetched waits.
    private func sources(
        for spec: JobSpec, offline: Bool, cancellation: CancellationFlag?, now: Date
    ) throws(OffpeakError) -> [String: Result<SourceContext, OffpeakError>] {
        guard !spec.sources.isEmpty || spec.items.contains(where: { !$0.sources.isEmpty }) else { return [:] }
        let research = research(
            for: spec, ttl: spec.cacheTTL, offline: offline, cancellation: cancellation)
        let items = spec.items.filter { !(spec.sources + $0.sources).isEmpty }
        let found = research.contexts(for: items.map { spec.sources + $0.sources }, now: now)
        return Dictionary(zip(items.map(\.id), found), uniquingKeysWith: { first, _ in first })
    }

    /// What reads `spec`'s sources and feeds, fresh for `ttl`; from the cache only when `offline`.
    func research(for spec: JobSpec, ttl: TimeInterval, offline: Bool, cancellation: CancellationFlag?)
        -> ResearchSources
    {
        var research = ResearchSources(
            cache: cache, fetcher: SourceFetcher(client: HTTPClient(), redactor: provider.redactor), ttl: ttl,
            job: spec.name, keep: spec.reusesUnchanged, logger: logger, cancellation: cancellation)
        research.offline = offline
        return research
    }

    /// The job's unfinished run with any new items merged in, or a new run; and the items of the
    /// unfinished run, not answered yet, that the spec no longer has (dropped with the merge).
    /// - Parameter onlyResuming: open the job's unfinished run only (or restart it when too old); nil
    ///   when there is none.
    private func prepareRun(
        spec: JobSpec, model: String, planned: [PlannedRequest], forced: Bool, onlyResuming: Bool = false,
        attempt: Int = 1
    ) throws(OffpeakError) -> (RunRecord, [String])? {
        let now = Date()
        let specHash = SHA256.hex(CanonicalJSON.text(spec))
        // A run to resume that is too old is restarted: a new run is the resume.
        var onlyResuming = onlyResuming
        if let stale = try store.runs.latestResumableRun(job: spec.name),
            try isTooOld(stale, spec: spec, now: now)
        {
            onlyResuming = false
            // Not resumed blindly: a new run starts, and the cache answers what the old one had.
            var old = stale
            let age = Duration.seconds(spec.checkpointMaxAge).formatted(
                .units(allowed: [.hours, .minutes, .seconds]))
            try move(
                &old, to: .failed,
                reason: "restarted: its checkpoint was older than checkpoint_max_age (\(age))")
            logger.info("run \(old.id) of \(spec.name) is older than \(age): starting anew")
        }
        var fresh = RunRecord.new(
            job: spec, provider: provider.kind, model: model, itemsTotal: planned.count, at: now)
        fresh.forced = forced
        let requests = Self.records(planned, runID: fresh.id, spec: spec, now: now)
        guard
            let (open, created) = try store.runs.openRun(
                job: spec.name, creating: onlyResuming ? nil : fresh, requests: onlyResuming ? [] : requests,
                lease: onlyResuming ? nil : newLease(fresh, at: now))
        else { return nil }
        if created { return (fresh, []) }
        let resumed = requests.map { request in
            var request = request
            request.runId = open.id
            return request
        }
        let dropped = try store.runs.merge(requests: resumed, into: open.id)
        var run = try store.runs.run(id: open.id) ?? open
        // Its holder finished it between the two reads (a tick racing a run): start over, on a run
        // that is open, or a new one.
        if !run.state.isResumable, attempt < 3 {
            return try prepareRun(
                spec: spec, model: model, planned: planned, forced: forced, onlyResuming: onlyResuming,
                attempt: attempt + 1)
        }
        run.specHash = specHash
        run.model = model
        run.forced = forced
        run.budgetStop = nil
        run.spec = CanonicalJSON.text(spec)
        logger.info("resuming run \(run.id) of \(spec.name): \(run.itemsDone) of \(run.itemsTotal) done")
        return (run, dropped)
    }

    /// What a pass says of the run a tick picked to resume (`Options.resuming`) that no longer is open:
    /// its holder finished it (or a user canceled it) after the tick listed it.
    private func closedMeanwhile(_ spec: JobSpec, _ picked: RunRecord?) throws(OffpeakError) -> RunOutcome {
        let run = try picked.flatMap { picked throws(OffpeakError) in
            try store.runs.run(id: picked.id) ?? picked
        }
        guard let run else { throw OffpeakError(.software, "job \(spec.name): no run to resume") }
        return RunOutcome(
            run: run, status: .ok,
            message: "job \(spec.name): run \(run.id) is \(run.state.rawValue) (it ended after this tick "
                + "looked); nothing to resume",
            spend: try store.ledger.spend(runID: run.id), outputDirectory: spec.output, answeredNow: 0)
    }

    /// A run whose last checkpoint is older than the job's `checkpoint_max_age` is restarted, not
    /// resumed. Submitted work (a queue job's requests) is the run itself and is always resumed, as
    /// is a run that never started.
    private func isTooOld(_ run: RunRecord, spec: JobSpec, now: Date) throws(OffpeakError) -> Bool {
        guard !spec.acceptsSubmissions, let checkpoint = try store.runs.checkpoint(runID: run.id) else {
            return false
        }
        // A run with batches out is collected, never restarted: starting anew would pay for them twice.
        if try store.batches.hasOpenBatches(runID: run.id) { return false }
        return now.timeIntervalSince(checkpoint.updatedAt) > spec.checkpointMaxAge
    }

    /// The stored requests of `planned`: what a run inserts, and what an estimate plans in memory.
    static func records(_ planned: [PlannedRequest], runID: String, spec: JobSpec, now: Date)
        -> [RequestRecord]
    {
        planned.map { plan in
            var state = RequestRecord.State.pending
            var error: String?
            switch plan.blocked {
            case .waiting(let why): (state, error) = (.waiting, why)
            case .failed(let why): (state, error) = (.failed, why)
            case nil: break
            }
            var record = RequestRecord(
                id: RequestRecord.newID(), runId: runID, job: spec.name, itemId: plan.itemId,
                position: plan.position, source: .spec, clientId: nil, tier: spec.tier.rawValue,
                payload: plan.request.canonicalText, cacheKey: plan.cacheKey, state: state,
                attempts: 0, nextAttemptAt: nil, error: error, createdAt: now, updatedAt: now)
            record.sources = SourceCitation.stored(plan.sources)
            return record
        }
    }

    func move(_ run: inout RunRecord, to state: RunState, reason: String?) throws(OffpeakError) {
        try store.move(&run, to: state, reason: reason)
    }
}
