import Foundation

extension JobRunner {
    /// Helps the process that holds `run`'s lease, on this host or another: answers rounds of the
    /// run's requests this pass claims (`LeaseStore.claimRound`), under this host's conditions and
    /// the limits and budgets every host shares, and leaves the rest to the holder: planning, the
    /// provider batches, the long documents' steps, the outputs and the run's state.
    ///
    /// A host whose conditions do not hold for the job leaves the run to its holder, and defers
    /// nothing: the work is not held back, only this host's share of it.
    func help(_ spec: JobSpec, run: RunRecord, options: Options) throws(OffpeakError) -> RunOutcome {
        let options = Self.windowed(options, spec)
        let holder = try store.leases.liveLeases(now: Date())[run.id]
        let held =
            "job \(spec.name): run \(run.id) is being run by "
            + (holder.map { "\($0.owner) on host \($0.host)" } ?? "another process")
        func leave(_ why: String) -> RunOutcome {
            RunOutcome(
                run: run, status: .ok, message: "\(held); this host leaves it to that one: \(why)",
                spend: Spend(), outputDirectory: spec.output, answeredNow: 0)
        }
        let (failing, sentence) = try Self.failing(spec, options.gate?.read())
        if !failing.isEmpty && !options.force {
            return leave("its conditions do not hold here (\(sentence))")
        }
        let lane = LaneChoice.choose(
            spec: spec, model: run.model, prices: prices, workspaceLane: config.lane,
            batchAPI: config.batchAPI,
            provider: provider,
            deadlineAt: run.deadlineAt, now: Date())
        if lane.api != nil { return leave("its calls go in provider batches, which that host collects") }
        if try store.runs.isCanceled(runID: run.id) { return leave("it was canceled") }
        let context = self.context(
            for: spec, hold: RunHold(owner: owner, ttl: leaseTTL, leased: false), options: options,
            tier: JobSpec.Tier(rawValue: run.tier) ?? spec.tier, model: run.model)
        defer { context.flushLimiters() }
        var session = RunSession(context: context, spec: spec, run: run, options: options, lanes: lane)
        defer {
            try? store.audits.releaseProbes(owner: owner, key: nil)
            try? store.leases.releaseClaim(runID: run.id, owner: owner)
        }
        let stop = try session.help()
        try cache.flush()
        let helped =
            "\(held); this host helped: answered \(Plural.count(session.tally.answeredNow, "item")) "
            + "in \(Plural.count(session.tally.callsMade, "call"))"
        return RunOutcome(
            run: try store.runs.run(id: run.id) ?? session.run, status: stop?.status ?? .ok,
            message: stop.map { "\(helped), then stopped: \($0.reason)" } ?? helped,
            spend: try store.ledger.spend(runID: run.id), outputDirectory: spec.output,
            answeredNow: session.tally.answeredNow, callsMade: session.tally.callsMade)
    }
}
