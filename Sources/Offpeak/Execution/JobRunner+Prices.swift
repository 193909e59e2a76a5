import Foundation

/// A job that waits for cheaper prices (`wait_for_cheaper_prices`, within its `deadline`): whether
/// its run starts now, and the watch its pass keeps on the prices (`PriceWait`, `PriceWatch`).
extension JobRunner {
    /// What the run's prices say at its start.
    struct PricePlan {
        /// Why the run waits instead of starting: the deferred queue's sentence.
        var wait: String?
        /// Said in the run's output: why it runs at dearer prices (forced, or the deadline).
        var note: String?
        var watch: PriceWatch?
    }

    /// The plan for a run of `spec` on `model` at the run's clock; nothing when the job does not
    /// wait for cheaper prices or its model's prices do not change with the clock.
    func pricePlan(_ spec: JobSpec, model: String, options: Options) throws(OffpeakError) -> PricePlan {
        guard spec.waitForCheaperPrices == true, let price = prices.cost(of: model), price.windows != nil
        else {
            return PricePlan()
        }
        let now = options.clock()
        // The run's deadline is kept by the machine's clock; prices are read on the run's.
        let ahead = now.timeIntervalSinceNow
        var open = options.resuming
        if open == nil { open = try store.runs.latestResumableRun(job: spec.name) }
        let deadline = open?.deadlineAt.map { $0 + ahead } ?? spec.deadline.map { now + $0 }
        let (work, lead) = try expectedWork(spec, model: model, open: open)
        let decision = PriceWait.plan(price: price, now: now, work: work, lead: lead, deadline: deadline)
        var plan = PricePlan(watch: PriceWatch(price: price, deadline: deadline, now: now))
        switch decision {
        case .wait(let wait) where options.force:
            plan.watch = nil
            plan.note =
                "runs now at \(price.at(now).window ?? "today's") prices (forced); waiting for "
                + "\(wait.window) prices at \(PriceWait.time(wait.until, in: wait.zone, now: now)) would have "
                + "saved about \(PriceWait.percent(wait.saves))"
        case .wait(let wait): plan.wait = wait.sentence(now: now)
        case .now(let note):
            if options.force { plan.watch = nil }
            plan.note = note.map { "runs now at \(price.at(now).window ?? "today's") prices: \($0)" }
        }
        return plan
    }

    /// When the job began to wait for cheaper prices: the first time of its open deferral, when that
    /// waits for them (`PriceWait.isSentence`), on the clock of the run that deferred it (the
    /// machine's, but under `--now`); nil when it does not wait for them.
    func waitedForPrices(job: String) throws(OffpeakError) -> Date? {
        guard let deferral = try store.schedules.deferred().first(where: { $0.job == job }),
            deferral.reasonList.contains(where: PriceWait.isSentence)
        else { return nil }
        return deferral.deferredAt
    }

    /// About how long the run's work left takes, and one call: its items not answered, as many
    /// calls at once as the provider allows, each as long as the model's typical call as measured
    /// (30 s when none is).
    func expectedWork(_ spec: JobSpec, model: String, open: RunRecord?) throws(OffpeakError)
        -> (work: TimeInterval, call: TimeInterval)
    {
        let items = open.map { max(0, $0.itemsTotal - $0.itemsDone - $0.itemsFailed) } ?? spec.items.count
        let inFlight = config.limits(for: provider.kind).inFlight(
            for: provider.kind, baseURL: provider.baseURL)
        let call = PriceWait.callSeconds(
            try store.ledger.latency(model: LatencyEstimate.key(model: model, lane: .live)))
        return (PriceWait.work(items: items, inFlight: inFlight, call: call), call)
    }
}
