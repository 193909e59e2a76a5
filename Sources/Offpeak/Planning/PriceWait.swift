import Foundation

/// Whether work that may wait (its job's `deadline`, with `wait_for_cheaper_prices: true`) starts
/// now or waits for the cheaper hours of its model's prices (`PriceWindows`), and what either saves
/// (DESIGN.md, "Price windows").
///
/// The plan compares the prices a call would land in now (the dearest from now to `lead` later:
/// a call started a minute before peak hours is billed at peak) with those of every later change
/// of prices at which the work, started then, still ends before the deadline; the cheapest wins, the
/// earliest of equals. It never waits past the latest start the deadline allows, and never waits
/// without saying for what, until when and what it saves.
enum PriceWait {
    /// What to do with work priced by the clock.
    enum Decision: Sendable, Equatable {
        /// Start now; `note` says why when waiting would have been cheaper (the deadline leaves no
        /// time to wait, or the user asked for now).
        case now(note: String?)
        case wait(Wait)
    }

    /// Waiting for cheaper prices.
    struct Wait: Sendable, Equatable {
        /// When the cheaper prices begin.
        var until: Date
        /// Their window's name (`off-peak`).
        var window: String
        /// What waiting saves, as a share of the prices now (0.5: half).
        var saves: Double
        var deadline: Date
        /// The zone the price page states its hours in: times are said in it.
        var zone: TimeZone

        /// `waiting for off-peak prices at 10:00 UTC (saves about 50 %, deadline 18:00 UTC)`.
        func sentence(now: Date) -> String {
            "waiting for \(window) prices at \(PriceWait.time(until, in: zone, now: now)) (saves about "
                + "\(PriceWait.percent(saves)), deadline \(PriceWait.time(deadline, in: zone, now: now)))"
        }
    }

    /// Whether `reason` (a deferral's, as stored) is a wait's `sentence`: it names the prices it
    /// waits for and when they begin.
    static func isSentence(_ reason: String) -> Bool {
        reason.hasPrefix("waiting for ") && reason.contains(" prices at ")
    }

    /// The plan for work of `price`'s model that takes about `work` seconds, at `now`.
    /// - Parameters:
    ///   - lead: how long a call takes to land: prices are read at the dearest over it.
    ///   - deadline: when the work must be done; without one nothing waits.
    static func plan(price: ModelPrice, now: Date, work: TimeInterval, lead: TimeInterval, deadline: Date?)
        -> Decision
    {
        guard let windows = price.windows, let deadline else { return .now(note: nil) }
        let landing = price.dearest(from: now, to: now + lead)
        let latestStart = deadline - work
        var best: (at: Date, price: ModelPrice)?
        for change in price.changes(after: now, through: latestStart)
        where change.price.referenceDollars < (best?.price ?? landing).referenceDollars {
            best = change
        }
        if let best {
            let saves = 1 - best.price.referenceDollars / landing.referenceDollars
            return .wait(
                Wait(
                    until: best.at, window: best.price.window ?? windows.outside, saves: saves,
                    deadline: deadline, zone: windows.timeZone))
        }
        return .now(note: missed(price, windows: windows, landing: landing, now: now, deadline: deadline))
    }

    /// Why running now at dearer prices is right when cheaper ones come after the latest start
    /// (`… at 10:00 UTC would save about 50 %, but the deadline (11:00 UTC) leaves no time to wait`);
    /// nil when nothing cheaper comes within a day.
    static func missed(
        _ price: ModelPrice, windows: PriceWindows, landing: ModelPrice, now: Date, deadline: Date
    ) -> String? {
        guard let cheaper = cheaper(price, windows: windows, than: landing, after: now) else { return nil }
        return
            "\(cheaper.price.window ?? windows.outside) prices at \(time(cheaper.at, in: windows.timeZone, now: now)) "
            + "would save about \(percent(1 - cheaper.price.referenceDollars / landing.referenceDollars)), but the "
            + "deadline (\(time(deadline, in: windows.timeZone, now: now))) leaves no time to wait"
    }

    /// The first change within a day after `now` to prices cheaper than `than`.
    static func cheaper(_ price: ModelPrice, windows: PriceWindows, than: ModelPrice, after now: Date)
        -> (at: Date, price: ModelPrice)?
    {
        price.changes(after: now, through: now + 86_400).first {
            $0.price.referenceDollars < than.referenceDollars
        }
    }

    /// About how long `items` take, `inFlight` calls at once, each taking `call` seconds.
    static func work(items: Int, inFlight: Int, call: TimeInterval) -> TimeInterval {
        (Double(items) / Double(max(1, inFlight))).rounded(.up) * call
    }

    /// How long a call of a model takes, as its calls were measured (`LatencyEstimate.msPerCall`),
    /// or 30 s when none was: what the plan takes a call to need.
    static func callSeconds(_ latency: LatencyEstimate?) -> TimeInterval {
        latency.map { $0.msPerCall / 1_000 } ?? unmeasuredCall
    }

    /// What a call is taken to need before any call of its model is measured.
    static let unmeasuredCall: TimeInterval = 30

    /// `10:00 UTC` on `now`'s day in `zone`, else `Mon 01:00 UTC`; a week or more away, with its date.
    static func time(_ date: Date, in zone: TimeZone, now: Date) -> String {
        let wall = WallClock(date, in: zone)
        let today = WallClock(now, in: zone)
        let clock = PriceWindows.clock(wall.hour * 60 + wall.minute)
        let name = zone.abbreviation(for: date) ?? zone.identifier
        // Foundation names UTC `GMT`; a zone of its own (Europe/London) keeps its name.
        let suffix = " " + (["UTC", "GMT"].contains(zone.identifier) ? "UTC" : name)
        if (wall.year, wall.month, wall.day) == (today.year, today.month, today.day) { return clock + suffix }
        let day = String(PriceWindows.weekdayNames[wall.weekday].prefix(3))
        guard date.timeIntervalSince(now) < 6 * 86_400 else {
            return "\(day) \(wall.year)-\(pad(wall.month))-\(pad(wall.day)) \(clock)\(suffix)"
        }
        return "\(day) \(clock)\(suffix)"
    }

    private static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// `50 %`, rounded to a whole percent.
    static func percent(_ share: Double) -> String { "\(Int((share * 100).rounded())) %" }
}
