import Foundation

/// Opening a job's run for a pass: the unfinished run resumed with the spec's new items merged in,
/// restarted when its checkpoint is too old, or a new one; or the job put in the deferred queue.
extension JobRunner {
    /// This process's lease on `run`, a run it creates: saved with the run (`RunStore.openRun`).
    func newLease(_ run: RunRecord, at now: Date) -> LeaseRecord {
        LeaseRecord(
            runId: run.id, owner: owner, acquiredAt: now, heartbeatAt: now, expiresAt: now + leaseTTL,
            host: host)
    }

    /// Puts the job in the deferred queue, and its run (a new, empty one if it has none: its
    /// requests are planned when it runs) in `waiting`. Nothing is sent or dropped.
    func deferRun(
        _ spec: JobSpec, reasons: [ConditionGate.Reason], sentence: String, resuming: RunRecord?,
        then: String = "`offpeak tick` runs it once its conditions hold, `offpeak run --force` runs it now",
        deferredAt: Date = Date()
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
            spec.name, run: run, reasons: sentence, host: host, at: deferredAt)
        let since =
            deferred.deferredAt == deferredAt
            ? "" : " (deferred since \(Timestamp.text(deferred.deferredAt)))"
        return RunOutcome(
            run: run, status: .temporaryFailure,
            message: "job \(spec.name) deferred: \(sentence)\(since); \(then)",
            spend: try store.ledger.spend(runID: run.id), outputDirectory: spec.output, answeredNow: 0,
            deferred: reasons)
    }

    func takeLease(_ run: RunRecord, job: String) throws(OffpeakError) {
        if let holder = try store.leases.acquireLease(runID: run.id, owner: owner, host: host, ttl: leaseTTL)
        {
            throw OffpeakError(
                .temporaryFailure, "job \(job): run \(run.id) is being run by \(holder); try again later")
        }
    }

    /// The job's unfinished run with any new items merged in, or a new run; and the items of the
    /// unfinished run, not answered yet, that the spec no longer has (dropped with the merge).
    /// - Parameter onlyResuming: open the job's unfinished run only (or restart it when too old); nil
    ///   when there is none.
    func prepareRun(
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
    func closedMeanwhile(_ spec: JobSpec, _ picked: RunRecord?) throws(OffpeakError) -> RunOutcome {
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
    func isTooOld(_ run: RunRecord, spec: JobSpec, now: Date) throws(OffpeakError) -> Bool {
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
            case .skipped(let why): (state, error) = (.skipped, why)
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
