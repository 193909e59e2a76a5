import Foundation
import Logging

/// Runs a job: plans its requests, resumes its unfinished run or starts one, sends each request
/// inside the run's budget, commits every answer with its checkpoint, and writes the outputs.
public struct JobRunner: Sendable {
    public struct Options: Sendable {
        public var force = false
        public var progress: (@Sendable (RunProgress) -> Void)?
        public init(force: Bool = false, progress: (@Sendable (RunProgress) -> Void)? = nil) {
            self.force = force
            self.progress = progress
        }
    }

    let workspace: Workspace
    let config: WorkspaceConfig
    let store: Store
    let provider: any CompletionProvider
    let prices: PriceTable
    let logger: Logger
    let owner: String
    /// A lease outlives a silent owner by this long before another process may take the run.
    let leaseTTL: TimeInterval = 300
    /// This process's claim on the run, renewed with every commit.
    var lease: (owner: String, ttl: TimeInterval) { (owner, leaseTTL) }

    public init(
        workspace: Workspace, config: WorkspaceConfig, store: Store, provider: any CompletionProvider,
        prices: PriceTable, logger: Logger
    ) {
        self.workspace = workspace
        self.config = config
        self.store = store
        self.provider = provider
        self.prices = prices
        self.logger = logger
        self.owner = Store.processOwner
    }

    public func run(_ spec: JobSpec, options: Options = Options()) throws(OffpeakError) -> RunOutcome {
        let model = config.model(for: spec.tier, provider: provider.kind)
        let planned = RequestPlanner(provider: provider.kind, model: model).plan(spec)
        var run = try prepareRun(spec: spec, model: model, planned: planned, forced: options.force)
        if let holder = try store.acquireLease(runID: run.id, owner: owner, ttl: leaseTTL) {
            throw OffpeakError(
                .temporaryFailure,
                "job \(spec.name): run \(run.id) is being run by \(holder); try again later")
        }
        defer { try? store.releaseLease(runID: run.id, owner: owner) }
        try move(&run, to: .running, reason: nil)
        var session = RunSession(runner: self, spec: spec, run: run, options: options)
        let outcome = try session.execute()
        return outcome
    }

    /// The job's unfinished run with any new items merged in, or a new run.
    private func prepareRun(spec: JobSpec, model: String, planned: [PlannedRequest], forced: Bool)
        throws(OffpeakError) -> RunRecord
    {
        let now = Date()
        let specHash = SHA256.hex(RequestPlanner.canonicalJSON(spec))
        if var run = try store.latestResumableRun(job: spec.name) {
            try store.merge(requests: records(planned, runID: run.id, spec: spec, now: now), into: run.id)
            run = try store.run(id: run.id) ?? run
            run.specHash = specHash
            run.model = model
            run.forced = forced
            run.budgetStop = nil
            logger.info("resuming run \(run.id) of \(spec.name): \(run.itemsDone) of \(run.itemsTotal) done")
            return run
        }
        var run = RunRecord.new(
            job: spec, provider: provider.kind, model: model, itemsTotal: planned.count, at: now)
        run.forced = forced
        try store.insert(run: run, requests: records(planned, runID: run.id, spec: spec, now: now))
        return run
    }

    private func records(_ planned: [PlannedRequest], runID: String, spec: JobSpec, now: Date)
        -> [RequestRecord]
    {
        planned.map { plan in
            RequestRecord(
                id: RequestRecord.newID(), runId: runID, job: spec.name, itemId: plan.itemId,
                position: plan.position, source: "spec", clientId: nil, tier: spec.tier.rawValue,
                payload: RequestPlanner.canonicalJSON(plan.request), cacheKey: plan.cacheKey, state: .pending,
                attempts: 0, nextAttemptAt: nil, error: nil, createdAt: now, updatedAt: now)
        }
    }

    func move(_ run: inout RunRecord, to state: RunState, reason: String?) throws(OffpeakError) {
        do { try run.move(to: state, reason: reason, at: Date()) } catch {
            throw OffpeakError(.software, error.description)
        }
        try store.update(run: run)
    }

}
