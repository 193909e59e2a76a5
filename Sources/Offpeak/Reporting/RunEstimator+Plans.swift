import Foundation

/// `estimate` on a model whose prices change with the clock (`PriceWindows`): each lane the run
/// could take, now and when the next cheaper prices begin, with its dollars and finish time, and
/// which one the run would take (`PriceWait`, as the run decides it).
extension RunEstimator {
    /// - Parameters:
    ///   - lanes: the lanes the provider offers, with their calls as planned.
    ///   - chosen: the lane the run would take.
    ///   - wall: the live lane's expected wall time; nil when unmeasured.
    ///   - deadline: the run's, on the estimate's clock.
    func plans(
        lanes: [(CallLane, LaneTally)], chosen: CallLane, wall: TimeInterval?, items: Int, inFlight: Int,
        deadline: Date?
    ) throws(OffpeakError) -> (plans: [RunEstimate.Plan], note: String?)? {
        guard let price = prices.cost(of: model), let windows = price.windows else { return nil }
        let call = PriceWait.callSeconds(try store?.ledger.latency(model: model))
        let landing = price.dearest(from: now, to: now + call)
        var starts = [now]
        let cheaper = PriceWait.cheaper(price, windows: windows, than: landing, after: now)
        if let cheaper { starts.append(cheaper.at) }
        var takenAt = now
        var note: String?
        if spec.waitForCheaperPrices == true {
            let work = PriceWait.work(items: items, inFlight: inFlight, call: call)
            switch PriceWait.plan(price: price, now: now, work: work, lead: call, deadline: deadline) {
            case .wait(let wait):
                takenAt = wait.until
                if !starts.contains(wait.until) { starts = (starts + [wait.until]).sorted() }
                note = wait.sentence(now: now)
            case .now(let why): note = why
            }
        } else if let cheaper {
            note =
                "waiting for \(cheaper.price.window ?? windows.outside) prices at "
                + "\(PriceWait.time(cheaper.at, in: windows.timeZone, now: now)) would save about "
                + "\(PriceWait.percent(1 - cheaper.price.referenceDollars / landing.referenceDollars)) "
                + "(wait_for_cheaper_prices: true, with a deadline, lets a run wait)"
        }
        var plans: [RunEstimate.Plan] = []
        for (lane, tally) in lanes {
            for start in starts {
                let inForce = start == now ? landing : price.at(start)
                let takes = lane == chosen && start == takenAt
                var finishes: Date?
                switch lane {
                case .live: finishes = wall.map { start + $0 }
                case .batch: finishes = start + BatchLane.completionWindow
                case .flex: finishes = nil
                }
                plans.append(
                    RunEstimate.Plan(
                        lane: lane.rawValue, window: inForce.window ?? windows.outside, starts: start,
                        finishes: finishes, dollars: inForce.dollars(for: tally.usage, lane: lane),
                        takes: takes))
            }
        }
        return (plans, note)
    }
}
