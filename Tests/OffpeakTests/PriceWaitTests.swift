import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 48, item 3: work that waits for the cheap hours it can afford to wait for. A job with
/// `wait_for_cheaper_prices: true` and a `deadline` starts at the cheapest prices that still let it
/// finish in time, waits in the deferred queue saying for what, until when and what it saves, and
/// stops at the end of its cheap hours unless its deadline needs it to go on.
@Suite(.ownThreads) struct PriceWaitTests {
    static let flash: ModelPrice = {
        PriceTable.bundled.cost(of: "deepseek-flash") ?? ModelPrice()
    }()

    static func at(_ text: String) throws -> Date { try PriceWindowsTests.at(text) }

    @Test func peakWorkWithADaysDeadlineWaitsForTheOffPeakHoursAndSaysSo() throws {
        let now = try Self.at("2026-11-30T06:05:00Z")  // a Monday, in peak hours
        let plan = PriceWait.plan(
            price: Self.flash, now: now, work: 3_600, lead: 30, deadline: now + 24 * 3600)
        guard case .wait(let wait) = plan else {
            Issue.record("\(plan)")
            return
        }
        #expect(wait.until == (try Self.at("2026-11-30T10:00:00Z")))
        #expect(abs(wait.saves - 0.5) < 1e-9)
        #expect(
            wait.sentence(now: now)
                == "waiting for off-peak prices at 10:00 UTC (saves about 50 %, deadline Tue 06:05 UTC)")
        // Friday's peak waits for Friday's 10:00, the first of the equally cheap hours.
        let friday = try Self.at("2026-12-04T07:00:00Z")
        guard
            case .wait(let fridays) = PriceWait.plan(
                price: Self.flash, now: friday, work: 600, lead: 30, deadline: friday + 72 * 3600)
        else { return #expect(Bool(false)) }
        #expect(fridays.until == (try Self.at("2026-12-04T10:00:00Z")))
    }

    @Test func aDeadlineTooCloseToWaitRunsNowAndSaysWhatWaitingWouldHaveSaved() throws {
        let now = try Self.at("2026-11-30T06:05:00Z")
        let plan = PriceWait.plan(price: Self.flash, now: now, work: 600, lead: 30, deadline: now + 3_600)
        #expect(
            plan
                == .now(
                    note:
                        "off-peak prices at 10:00 UTC would save about 50 %, but the deadline (07:05 UTC) leaves "
                        + "no time to wait"))
        // The work must end by the deadline: four hours of it cannot wait for 10:00 with a deadline at 13:00.
        let long = PriceWait.plan(
            price: Self.flash, now: now, work: 4 * 3600, lead: 30, deadline: now + 7 * 3600)
        guard case .now = long else { return #expect(Bool(false), "\(long)") }
        #expect(
            PriceWait.plan(price: Self.flash, now: now, work: 3 * 3600, lead: 30, deadline: now + 7 * 3600)
                != long, "three hours of it can")
        // Off-peak already: nothing to wait for, nothing to say.
        let offPeak = try Self.at("2026-11-30T10:30:00Z")
        #expect(
            PriceWait.plan(price: Self.flash, now: offPeak, work: 600, lead: 30, deadline: offPeak + 86_400)
                == .now(note: nil))
        // No deadline: nothing waits.
        #expect(
            PriceWait.plan(price: Self.flash, now: now, work: 600, lead: 30, deadline: nil) == .now(note: nil)
        )
    }

    /// A call sent 20 seconds before peak hours, expected to take 30, would be billed at peak: the
    /// plan reads the prices it lands in.
    @Test func aCallThatWouldLandInPeakHoursWaits() throws {
        let now = try Self.at("2026-11-30T00:59:40Z")
        guard
            case .wait(let wait) = PriceWait.plan(
                price: Self.flash, now: now, work: 60, lead: 30, deadline: now + 86_400)
        else { return #expect(Bool(false)) }
        #expect(wait.until == (try Self.at("2026-11-30T04:00:00Z")))
        var watch = try #require(PriceWatch(price: Self.flash, deadline: now + 86_400, now: now - 60))
        #expect(watch.check(now: now - 60, lead: 30, work: 60) == .go)
        guard case .stop(let stop) = watch.check(now: now, lead: 30, work: 60) else {
            return #expect(Bool(false))
        }
        #expect(
            stop.state == .waiting && stop.status == .temporaryFailure && stop.deferred == [.cheaperPrices])
        #expect(
            stop.reason
                == "waiting for off-peak prices at 04:00 UTC (saves about 50 %, deadline Tue 00:59 UTC)")
        // With an hour left of its deadline, the pass goes on at peak prices, and says so once.
        var late = try #require(PriceWatch(price: Self.flash, deadline: now + 3_600, now: now - 60))
        #expect(
            late.check(now: now, lead: 30, work: 600)
                == .goesOn(
                    "goes on at peak prices: off-peak prices at 04:00 UTC would save about 50 %, but the "
                        + "deadline (01:59 UTC) leaves no time to wait"))
        #expect(late.check(now: now + 60, lead: 30, work: 600) == .go)
    }

    /// On a clock the test moved to 00:59:55 UTC on a Monday (the run's and the sim's), a run of a job
    /// that waits for cheaper prices answers until its next call would land in peak hours, stops there
    /// (resumable, 75), waits in the deferred queue saying until when; at 04:00 it goes on, and
    /// nothing was billed at peak prices.
    @Test func aRunThatReachesPeakHoursStopsAtTheBoundaryAndGoesOnWhenTheyEnd() throws {
        func simAt(_ instant: String) throws -> (SimProcess, TimeInterval) {
            let offset = try Self.at(instant).timeIntervalSinceNow
            return (
                try SimProcess(arguments: ["--clock-offset", "\(offset)", "--latency-ms", "300"]), offset
            )
        }
        let (sim, offset) = try simAt("2026-11-30T00:59:52Z")
        let workspace = try TemporaryWorkspace()
        func configure(_ sim: SimProcess) throws {
            try workspace.write(
                "offpeak.yaml",
                "provider: deepseek\nbase_url: \(sim.url)/deepseek\nlimits: {deepseek: {in_flight: 1}}\n")
        }
        try configure(sim)
        let items = (1...30).map { "  - {id: q\($0), text: \"Question \($0) about the tides?\"}" }
        try workspace.write(
            "jobs/tides.yaml",
            "kind: prompt\ntemplate: \"Answer: {{text}}\"\nbatching: off\nmax_tokens: 16\ndeadline: 24h\n"
                + "wait_for_cheaper_prices: true\n"
                + "items:\n" + items.joined(separator: "\n") + "\n")
        func run(_ offset: TimeInterval) throws -> RunOutcome { try Self.run(workspace, offset: offset) }
        // One call measures the model's speed first: a call of unknown length is taken to need 30 s,
        // which from 00:59:52 lands in peak hours.
        try workspace.write(
            "jobs/warm.yaml", "kind: prompt\ntemplate: \"{{item}}\"\nmax_tokens: 16\nitems: [tides]\n")
        #expect(try Self.run(workspace, job: "warm", offset: offset).status == .ok)
        let first = try run(offset)
        #expect(first.status == .temporaryFailure, "\(first.message)")
        #expect(first.run.state == .waiting)
        #expect(
            first.run.itemsDone > 3 && first.run.itemsDone < 30, "\(first.run.itemsDone) \(first.message)")
        #expect(first.deferred == [.cheaperPrices])
        let windows = try #require(try sim.stats()["billed_by_window"] as? [String: [String: Int]])
        #expect(Set(windows.keys) == ["off-peak"], "nothing billed at peak: \(windows)")
        let queue = try QueueReport.make(store: try workspace.openStore(), conditions: nil)
        let reason = try #require(queue.deferred.first?.reasons.first)
        #expect(reason.hasPrefix("waiting for off-peak prices at 04:00 UTC (saves about 50 %, deadline Tue "))

        // Peak hours: a tick's pass leaves it waiting, and sends nothing.
        let (peakSim, peak) = try simAt("2026-11-30T02:00:00Z")
        try configure(peakSim)
        let during = try run(peak)
        #expect(during.status == .temporaryFailure && during.spend.calls == first.spend.calls)
        #expect(during.run.itemsDone == first.run.itemsDone)
        #expect(
            during.message.hasPrefix(
                "job tides deferred: waiting for off-peak prices at 04:00 UTC (saves about 50 %"))
        #expect(try peakSim.stats()["calls"] as? Int == 0)

        let (later, morning) = try simAt("2026-11-30T04:00:01Z")
        try configure(later)
        let second = try run(morning)
        #expect(second.status == .ok, "\(second.message)")
        #expect(second.run.itemsDone == 30)
        let after = try #require(try later.stats()["billed_by_window"] as? [String: [String: Int]])
        #expect(Set(after.keys) == ["off-peak"], "\(after)")
        let store = try workspace.openStore()
        #expect(try QueueReport.make(store: store, conditions: nil).deferred.isEmpty)
        // The ledger: every call (the warm-up's, the 30 items') billed off-peak; waiting saved, on
        // the calls after the wait, what they cost (peak prices are twice off-peak's).
        let shares = try store.ledger.windowShares(by: .all, calendar: .current)
        #expect(shares.map { "\($0.window) \($0.calls)" } == ["off-peak 31"])
        let saved = try store.ledger.waitingSavings()
        #expect(saved.calls == 30 - first.run.itemsDone)
        let afterWait = second.spend.dollars - first.spend.dollars
        #expect(abs(saved.dollars - afterWait) <= 1e-9 * afterWait, "\(saved) \(afterWait)")
    }

    /// A budget reserves each call at the dearest prices from its start to its timeout: with room for
    /// one call at off-peak prices and not at peak ones, the call sent at 00:30 UTC on a Monday goes,
    /// and the same call sent ten seconds before peak hours begin, which may land in them, is held
    /// by the budget, billed nothing.
    @Test func aBudgetReservesACallThatMayLandInPeakHoursAtPeakPrices() throws {
        let job =
            "kind: prompt\ntemplate: \"{{item}}\"\nbatching: off\nmax_tokens: 1000\nitems: [tides]\n"
            + "budget: {max_dollars: 0.003}\n"
        func run(at instant: String) throws -> (RunOutcome, SimProcess) {
            let offset = try Self.at(instant).timeIntervalSinceNow
            let sim = try SimProcess(arguments: ["--clock-offset", "\(offset)"])
            let workspace = try TemporaryWorkspace()
            try workspace.write("offpeak.yaml", "provider: deepseek\nbase_url: \(sim.url)/deepseek\n")
            try workspace.write("jobs/tides.yaml", job)
            return (try Self.run(workspace, offset: offset), sim)
        }
        let (early, earlySim) = try run(at: "2026-11-30T00:30:00Z")
        #expect(early.status == .ok, "\(early.message)")
        #expect(try earlySim.stats()["calls"] as? Int == 1)
        let (late, lateSim) = try run(at: "2026-11-30T00:59:50Z")
        #expect(late.status == .temporaryFailure && late.run.state == .interrupted, "\(late.message)")
        // $0.003963: the peak prices (the same call at 00:30 was held to at most half of it).
        #expect(
            late.message
                == "job tides: stopped by budget max_dollars: $0.00 spent, next call may cost up to $0.003963, "
                + "limit $0.003000; 0 of 1 item answered (0 now); run it again to do the rest")
        #expect(try lateSim.stats()["calls"] as? Int == 0)
    }

    /// `--force` runs now at today's prices, and says what waiting would have saved.
    @Test func aForcedRunSaysWhatWaitingWouldHaveSaved() throws {
        let offset = try Self.at("2026-11-30T06:05:00Z").timeIntervalSinceNow
        let sim = try SimProcess(arguments: ["--clock-offset", "\(offset)"])
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: deepseek\nbase_url: \(sim.url)/deepseek\n")
        try workspace.write(
            "jobs/tides.yaml",
            "kind: prompt\ntemplate: \"{{item}}\"\ndeadline: 24h\nwait_for_cheaper_prices: true\nitems: [a, b]\n"
        )
        let outcome = try Self.run(workspace, offset: offset, force: true)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(
            outcome.message.hasPrefix(
                "job tides runs now at peak prices (forced); waiting for off-peak prices at 10:00 UTC would have "
                    + "saved about 50 %; "))
        #expect(Set((try sim.stats()["billed_by_window"] as? [String: Any] ?? [:]).keys) == ["peak"])
    }

    /// `estimate` shows each plan (a lane, now or when the cheaper prices begin), its dollars and
    /// finish, and the one the run takes; a job that does not wait is told what waiting would save.
    @Test func theEstimateShowsEachPlanAndTheOneTheRunTakes() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: deepseek\n")
        let items = "items: [tides, waves, storms, currents]\nmax_tokens: 100\nbatching: off\n"
        try workspace.write(
            "jobs/tides.yaml",
            "kind: prompt\ntemplate: \"{{item}}\"\ndeadline: 24h\nwait_for_cheaper_prices: true\n" + items)
        try workspace.write("jobs/now.yaml", "kind: prompt\ntemplate: \"{{item}}\"\n" + items)
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
            logger: Logger(label: "test"))
        let now = try Self.at("2026-11-30T06:05:00Z")
        let waits = try context.estimate(try context.loadJob("tides"), now: now)
        let plans = try #require(waits.plans)
        #expect(plans.map(\.window) == ["peak", "off-peak"])
        #expect(plans.map(\.takes) == [false, true])
        #expect(abs(plans[1].dollars * 2 - plans[0].dollars) < 1e-12, "off-peak is half")
        #expect(waits.dollars == plans[1].dollars)
        let text = waits.text.components(separatedBy: "\n")
        let at = try #require(text.firstIndex { $0.hasPrefix("prices change with the clock") })
        #expect(
            Array(text[at...])
                == [
                    "prices change with the clock: peak now, off-peak from 10:00 UTC",
                    "PLAN                     STARTS     FINISHES  COST",
                    "live, now (peak)         06:05 UTC  unknown   \(Money.dollars(plans[0].dollars))",
                    "live, wait (off-peak) *  10:00 UTC  unknown   \(Money.dollars(plans[1].dollars))",
                    "* the plan the run takes: waiting for off-peak prices at 10:00 UTC (saves about 50 %, "
                        + "deadline Tue 06:05 UTC)",
                    "",
                ])
        let runsNow = try context.estimate(try context.loadJob("now"), now: now)
        #expect(runsNow.plans?.map(\.takes) == [true, false])
        #expect(runsNow.dollars == runsNow.plans?.first?.dollars)
        #expect(
            runsNow.text.contains(
                "* the plan the run takes: waiting for off-peak prices at 10:00 UTC would save about 50 % "
                    + "(wait_for_cheaper_prices: true, with a deadline, lets a run wait)\n"))
        // A model whose prices do not change shows no plans.
        try workspace.write("offpeak.yaml", "provider: anthropic\n")
        let flat = try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
            logger: Logger(label: "test"))
        #expect(try flat.estimate(try flat.loadJob("tides"), now: now).plans == nil)
    }

    /// A run of `job` on DeepSeek, on a clock `offset` seconds ahead of the machine's.
    static func run(
        _ workspace: TemporaryWorkspace, job: String = "tides", offset: TimeInterval, force: Bool = false
    )
        throws -> RunOutcome
    {
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root),
            environment: try workspace.environment(["DEEPSEEK_API_KEY": "sk-ds"]),
            logger: Logger(label: "test"))
        var options = JobRunner.Options(force: force)
        options.clock = { Date().addingTimeInterval(offset) }
        return try context.run(try context.loadJob(job), options: options)
    }

    @Test func waitingForCheaperPricesNeedsADeadline() throws {
        let error = #expect(throws: OffpeakError.self) {
            try JobSpecParser.parse(
                yaml: "kind: prompt\ntemplate: \"{{item}}\"\nitems: [a]\nwait_for_cheaper_prices: true\n",
                path: "jobs/j.yaml", workspace: URL(fileURLWithPath: "/tmp"))
        }
        #expect(
            error?.description
                == "jobs/j.yaml:4:1: wait_for_cheaper_prices: needs a deadline: how long the job may wait for them "
                + "(deadline: 24h)")
    }
}
