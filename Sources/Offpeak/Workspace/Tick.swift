import Foundation
import Logging

/// One `offpeak tick`: what cron or a systemd timer runs every few minutes. Under the tick lock
/// (`TickLock`) it purges expired cache entries, then resumes unfinished runs (interrupted, waiting for
/// their conditions or for retries), runs scheduled jobs that are due and queue jobs whose spool
/// folder had requests to take, each inside what is left of the window.
public struct Tick: Sendable {
    public struct Options: Sendable {
        /// Seconds of work this tick may do; `nil`: no limit.
        var window: TimeInterval?
        var gate: ConditionGate?
        var stop: StopSignal?
        /// The time schedules, the cache's expiry and the hosts' specs are read at (`tick --now`
        /// moves it in tests); the window, leases and calls go by the machine's clock.
        var now: Date
        /// `now` going on at the machine's pace: what the jobs a tick runs take as now for the cache
        /// (answers' and sources' TTLs), the ledger's day and the budgets' (`JobRunner.Options.clock`).
        var clock: @Sendable () -> Date
        /// The offpeak ticking, as the hosts seen record it (`offpeak hosts`).
        var version: String

        /// - Parameter now: the moment the tick takes as now (`tick --now`); nil: the machine's.
        public init(
            window: TimeInterval? = nil, gate: ConditionGate? = nil, stop: StopSignal? = nil,
            now: Date? = nil, version: String = "unknown"
        ) {
            self.window = window
            self.gate = gate
            self.stop = stop
            self.now = now ?? Date()
            self.clock = MovedClock.from(now)
            self.version = version
        }
    }

    /// What became of one job this tick.
    struct JobLine: Sendable, Encodable {
        var job: String
        /// Why the tick picked it: `resume`, `schedule` or `spool`.
        var why: String
        var run: String?
        var state: String?
        var message: String
        var status: Int32
    }

    public struct Report: Sendable, Encodable {
        /// Set when another tick holds the tick lock: this one did nothing.
        var skipped: String?
        var purgedCacheEntries = 0
        /// What retention pruned this tick (`retention:` in offpeak.yaml).
        var pruned = PruneReport()
        var jobs: [JobLine] = []
        /// Job specs that could not be read (the other jobs still ran).
        var errors: [String] = []
        /// What spool folders refused this tick: lines and files, and entries not taken that this
        /// tick noticed first (`offpeak queue` lists those until they are gone).
        var warnings: [String] = []
        /// 0 when everything picked is done; 75 when work remains for a later tick (window, signal,
        /// conditions, retries); 65/78/69 when a spec, the configuration or the provider is wrong.
        public var status: Int32 = 0
        /// Why the metrics file (`metrics.textfile`) was not written, for stderr; the tick's work
        /// and status stand.
        public var metricsWarning: String?

        public var text: String {
            if let skipped { return skipped + "\n" }
            var out = ""
            for error in errors { out += "error: \(error)\n" }
            for warning in warnings { out += "warning: \(warning)\n" }
            if jobs.isEmpty { out += "nothing to do\n" }
            for line in jobs { out += "\(line.job) [\(line.why)]: \(line.message)\n" }
            if purgedCacheEntries > 0 { out += "purged \(purgedCacheEntries) expired cache entries\n" }
            if pruned.runs > 0 { out += "pruned \(pruned.sentence)\n" }
            if pruned.ledger.runs > 0 { out += "\(pruned.ledgerSentence("rolled up"))\n" }
            return out
        }
    }

    let context: WorkspaceContext

    public init(context: WorkspaceContext) {
        self.context = context
    }

    public func run(_ options: Options) throws(OffpeakError) -> Report {
        let host = try context.host()
        let opening = try context.storeOpening()
        // Says "read-only", not "cannot open tick.lock".
        try Store.requireWritable(opening)
        let started = Date()
        var report = Report()
        // Opened once: every job of the tick, the cache purge and the metrics use this one store.
        var store: Store?
        // Held to the end: the metrics are written under the tick lock, so ticks record themselves
        // in order.
        var lock: TickLock?
        defer { withExtendedLifetime(lock) {} }
        func recordTick(status: Int32) -> String? {
            // The host's end is recorded whatever the tick came to, wherever the store answers.
            do { try store?.hosts.tickEnded(host: host, status: status, at: Date()) } catch {
                context.logger.warning("cannot record the end of this tick in the store: \(error)")
            }
            return MetricsFile(context: context).write(
                tick: LastTick(
                    startedAt: started, durationSeconds: Date().timeIntervalSince(started), status: status),
                store: store)
        }
        do throws(OffpeakError) {
            // SQLite: the workspace's lock, then the store; PostgreSQL: the store, then its lock on
            // the connection this tick keeps.
            switch try TickLock.acquire(opening, host: host) {
            case .acquired(let held): lock = held
            case .held(let holder):
                report.skipped = Self.skipped(holder)
                return report
            }
            let opened: Store
            if let held = lock?.store { opened = held } else { opened = try context.openStore() }
            store = opened
            try opened.hosts.tickStarted(
                host: host, version: options.version,
                conditions: options.gate.map { $0.read().summary } ?? "not read", at: started)
            try runJobs(options, store: opened, host: host, report: &report)
        } catch {
            if let warning = recordTick(status: error.status.rawValue) {
                context.logger.warning("\(warning)")
            }
            throw error
        }
        report.metricsWarning = recordTick(status: report.status)
        return report
    }

    /// Finished runs a tick prunes at most, and pruned runs whose ledger rows it rolls up at most
    /// (`Store.prune`); `offpeak store prune` does the rest at once.
    static let pruneRunsPerTick = 5

    /// What a tick that found another holding the tick lock says: it did nothing.
    static func skipped(_ holder: TickLock.Holder) -> String {
        switch holder {
        case .process(let pid):
            "another tick is running in this workspace (pid \(pid.map(String.init) ?? "unknown")); nothing to do"
        case .host(let host): "another tick of host \(host) is running on this store; nothing to do"
        }
    }

    /// The tick's work, under the tick lock.
    private func runJobs(_ options: Options, store: Store, host: String, report: inout Report)
        throws(OffpeakError)
    {
        let cache = ResponseCache(
            store: store, maxBytes: context.config.cacheMaxBytes, logger: context.logger)
        report.purgedCacheEntries = try cache.purge(.expired, now: options.now).removed
        // Calls in flight of processes gone, whose run no one took over (canceled since, say).
        try store.ledger.bookLostCalls()
        // Retention, a few runs a tick: the store stops growing past the horizon, no tick slowed.
        if let keep = context.config.keepRuns {
            report.pruned = try store.prune(
                keeping: keep, keepingLedger: context.config.keepLedgerRows, now: options.now,
                limit: Self.pruneRunsPerTick)
            if report.pruned.runs > 0 || report.pruned.ledger.runs > 0 {
                _ = try store.reclaimSpace(whole: false)
            }
        }
        let windowEnd = options.window.map { Date() + $0 }  // the machine's clock, as calls take it
        // Only the tick's first call starts whatever the window says; after it, every job's calls
        // must fit what is left.
        var called = false
        for (spec, why, held) in try work(store: store, host: host, options: options, report: &report) {
            if let stop = options.stop, stop.isRequested {
                report.add(
                    JobLine(
                        job: spec.name, why: why,
                        message: "not started: stopped by \(stop.reason ?? "a signal")",
                        status: ExitStatus.temporaryFailure.rawValue))
                continue
            }
            if let windowEnd, windowEnd <= Date() {
                report.add(
                    JobLine(
                        job: spec.name, why: why, message: "not started: the window is over; next tick",
                        status: ExitStatus.temporaryFailure.rawValue))
                continue
            }
            var runOptions = JobRunner.Options(gate: options.gate, windowEnd: windowEnd, stop: options.stop)
            runOptions.firstCallAlwaysStarts = !called
            runOptions.clock = options.clock
            do {
                let outcome: RunOutcome
                if let held, why == "help" {
                    outcome = try context.help(spec, run: held, options: runOptions, store: store)
                } else {
                    runOptions.resuming = why == "resume" ? held : nil
                    outcome = try context.run(spec, options: runOptions, store: store)
                }
                called = called || outcome.callsMade > 0
                report.add(
                    JobLine(
                        job: spec.name, why: why, run: outcome.run.id, state: outcome.run.state.rawValue,
                        message: outcome.message, status: outcome.status.rawValue))
            } catch {
                report.add(
                    JobLine(
                        job: spec.name, why: why, message: error.description, status: error.status.rawValue))
            }
        }
    }

    /// The jobs this tick runs, each once, in order: unfinished runs first (oldest first), then
    /// queue jobs whose spool folder had requests to take. A job whose spec differs from another
    /// host's (`JobSpecAgreement`) is none of them: the report says why, and its schedule stays due.
    /// The third element is the run a job was picked for: one another process holds is helped
    /// (`JobRunner.help`), not run; one to resume is only resumed, never started anew.
    private func work(store: Store, host: String, options: Options, report: inout Report)
        throws(OffpeakError) -> [(JobSpec, String, RunRecord?)]
    {
        let catalog = try JobCatalog.load(workspace: context.workspace.root)
        var specs = catalog.specs
        for error in catalog.errors {
            report.errors.append(error.description)
            report.status = max(report.status, error.status.rawValue)
        }
        let disagreements = try JobSpecAgreement(store: store, host: host).check(
            Array(specs.values), now: options.now)
        for (job, disagreement) in disagreements.sorted(by: { $0.key < $1.key }) {
            specs[job] = nil
            report.errors.append(disagreement.message)
            report.status = max(report.status, ExitStatus.configuration.rawValue)
        }
        var picked: [(JobSpec, String, RunRecord?)] = []
        var seen: Set<String> = []
        func pick(_ spec: JobSpec, _ why: String, run: RunRecord? = nil) {
            if seen.insert(spec.name).inserted { picked.append((spec, why, run)) }
        }
        let open = try store.runs.resumableRunRows()
        // A run whose row cannot be read is reported once; its job is not started (`run` would
        // refuse it the same way), the others go on.
        for unreadable in open.unreadable {
            seen.insert(unreadable.job)
            report.errors.append(unreadable.description)
            report.status = max(report.status, ExitStatus.ioError.rawValue)
        }
        // A run another process holds (on this host or another ticking the same store) is that
        // process's to finish: this tick helps it answer its requests, where it has the job's spec
        // and the run is running; else it says so, not an error, and leaves the job alone.
        // Leases are written and renewed by the machine's clock, whatever clock the tick reads
        // schedules by (`Options.now`).
        let held = try store.leases.liveLeases(now: Date())
        for run in open.runs {
            if let lease = held[run.id], lease.owner != Store.processOwner {
                if run.state == .running, let spec = specs[run.job] {
                    pick(spec, "help", run: run)
                    continue
                }
                seen.insert(run.job)
                report.add(
                    JobLine(
                        job: run.job, why: "resume", run: run.id, state: run.state.rawValue,
                        message: "job \(run.job): run \(run.id) is being run by \(lease.owner) on host "
                            + "\(lease.host); this tick leaves it", status: ExitStatus.ok.rawValue))
                continue
            }
            // A run only waiting for provider batches not due a poll is not resumed: nothing can
            // have changed, and a pass would re-plan every item for nothing.
            if let next = try store.batches.nextBatchPollOnly(runID: run.id, now: options.now) {
                seen.insert(run.job)
                report.add(
                    JobLine(
                        job: run.job, why: "resume", run: run.id, state: run.state.rawValue,
                        message: "job \(run.job): \(run.reason ?? "in a provider batch"); its batches are "
                            + "asked about next at \(Timestamp.text(next))",
                        status: ExitStatus.temporaryFailure.rawValue))
                continue
            }
            // The spec file as it is now; a run made without one (`offpeak summarize`) from the spec it
            // kept. A job whose file was removed is left alone: removing it is how a user stops it.
            if let spec = specs[run.job] {
                pick(spec, "resume", run: run)
            } else if let stored = run.storedSpec(), stored.sourcePath == nil {
                pick(stored, "resume", run: run)
            }
        }
        // A due schedule fires once however many slots passed while the machine was off; it is
        // recorded as fired before it runs, so a crash mid-run resumes the run, not the schedule.
        // Of hosts ticking one store at once, the first to record the firing runs it.
        let book = ScheduleBook(store: store)
        for spec in try book.due(specs.values.sorted(by: { $0.name < $1.name }), now: options.now) {
            if try book.fired(spec, at: options.now) {
                pick(spec, "schedule")
            } else {
                context.logger.info("job \(spec.name): its schedule fired elsewhere first")
            }
        }
        // Taken here, under the tick lock, so a job runs for its spool only when something was
        // added: a folder holding nothing to take (or only refused lines) starts no run.
        for spec in specs.values.sorted(by: { $0.name < $1.name }) where spec.acceptsSubmissions {
            let queue = SubmissionQueue(store: store, spec: spec, config: context.config)
            do {
                let taken = try SpoolFolder(workspace: context.workspace, job: spec.name).take(
                    into: queue, spec: spec)
                report.warnings += taken.refused.map(\.description)
                if !taken.added.isEmpty { pick(spec, "spool") }
            } catch {
                report.add(
                    JobLine(
                        job: spec.name, why: "spool", message: error.description,
                        status: error.status.rawValue))
            }
        }
        return picked
    }
}

extension Tick.Report {
    mutating func add(_ line: Tick.JobLine) {
        jobs.append(line)
        status = max(status, line.status)
    }
}
