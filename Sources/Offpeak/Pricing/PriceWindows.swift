import Foundation

/// When a model's prices change with the clock: DeepSeek bills half its list price outside its
/// peak hours, on weekdays, read in UTC. A model's entry in a price file says so in
/// `price_windows` (offpeak's form) or in LiteLLM's `off_peak_pricing`, which this reads too:
///
/// ```json
/// "price_windows": {
///   "time_zone": "UTC", "weekday_time_zone": "Asia/Shanghai", "outside": "peak",
///   "windows": [
///     {"name": "off-peak", "days": "mon-fri", "hours": ["00:00-01:00", "10:00-24:00"], "factor": 0.5},
///     {"name": "off-peak", "days": ["sat", "sun"], "factor": 0.5}
///   ]
/// }
/// ```
///
/// - Hours are read in `time_zone`, weekdays in `weekday_time_zone` (the same zone unless it is
///   given: a price page may state its hours in UTC and its weekdays in the provider's own zone).
/// - A window's days and hours are read apart, as cron reads its fields: the instant's weekday must
///   be one of `days` (every day when none is given) and its time of day within one of `hours`
///   (the whole day when none is given). `HH:MM-HH:MM`: the start inclusive, the end exclusive; a
///   window whose end comes before its start wraps past midnight (on the same weekdays: `fri`
///   with `22:00-02:00` is Friday's first two hours and last two); a start equal to its end, or
///   `00:00-24:00`, is the whole day. These are LiteLLM's rules for `hours_utc`.
/// - Windows may not overlap; the hours no window covers are named `outside` and billed at the
///   entry's own prices.
/// - A window's prices: any of the entry's token prices it names, and `factor` times the entry's
///   for those it does not (1 when it gives no factor).
struct PriceWindows: Sendable, Equatable {
    var timeZone: TimeZone
    var weekdayTimeZone: TimeZone
    /// The name of the hours no window covers.
    var outside: String
    var windows: [Window]
    /// Where the windows were read, and when (a bundled entry says).
    var source: String?

    struct Window: Sendable, Equatable {
        var name: String
        /// 0 = Sunday … 6 = Saturday.
        var days: Set<Int>
        /// Empty: the whole day.
        var hours: [Hours]
        var prices: Prices

        /// Whether the window is open at `weekday` (0 = Sunday) and `minute` of the day.
        func contains(weekday: Int, minute: Int) -> Bool {
            days.contains(weekday) && (hours.isEmpty || hours.contains { $0.contains(minute) })
        }
    }

    /// `HH:MM-HH:MM` as minutes of the day: `start` in 0..<1440, `end` in 0...1440.
    struct Hours: Sendable, Equatable {
        var start: Int
        var end: Int

        var wholeDay: Bool { start == end || (start == 0 && end == 1_440) }

        func contains(_ minute: Int) -> Bool {
            if wholeDay { return true }
            return start < end ? (start..<end).contains(minute) : minute >= start || minute < end
        }
    }

    /// What a window bills: the token prices it names, and `factor` times the entry's for the rest.
    struct Prices: Sendable, Equatable, Decodable {
        var inputCostPerToken: Double?
        var outputCostPerToken: Double?
        var cacheReadInputTokenCost: Double?
        var cacheCreationInputTokenCost: Double?
        var inputCostPerTokenBatches: Double?
        var outputCostPerTokenBatches: Double?
        var factor: Double?

        init() {}

        /// The prices by the entry's own field names (`ModelPrice.CodingKeys`), and `factor`.
        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: ModelPrice.CodingKeys.self)
            inputCostPerToken = try fields.decodeIfPresent(Double.self, forKey: .inputCostPerToken)
            outputCostPerToken = try fields.decodeIfPresent(Double.self, forKey: .outputCostPerToken)
            cacheReadInputTokenCost = try fields.decodeIfPresent(
                Double.self, forKey: .cacheReadInputTokenCost)
            cacheCreationInputTokenCost = try fields.decodeIfPresent(
                Double.self, forKey: .cacheCreationInputTokenCost)
            inputCostPerTokenBatches = try fields.decodeIfPresent(
                Double.self, forKey: .inputCostPerTokenBatches)
            outputCostPerTokenBatches = try fields.decodeIfPresent(
                Double.self, forKey: .outputCostPerTokenBatches)
            factor = try decoder.container(keyedBy: FactorKey.self).decodeIfPresent(
                Double.self, forKey: .factor)
        }

        private enum FactorKey: String, CodingKey { case factor }

        /// `price` with this window's prices in force.
        func applied(to price: ModelPrice) -> ModelPrice {
            let factor = factor ?? 1
            func scaled(_ own: Double?, _ base: Double?) -> Double? { own ?? base.map { $0 * factor } }
            var price = price
            price.inputCostPerToken = scaled(inputCostPerToken, price.inputCostPerToken)
            price.outputCostPerToken = scaled(outputCostPerToken, price.outputCostPerToken)
            price.cacheReadInputTokenCost = scaled(cacheReadInputTokenCost, price.cacheReadInputTokenCost)
            price.cacheCreationInputTokenCost = scaled(
                cacheCreationInputTokenCost, price.cacheCreationInputTokenCost)
            price.inputCostPerTokenBatches = scaled(inputCostPerTokenBatches, price.inputCostPerTokenBatches)
            price.outputCostPerTokenBatches = scaled(
                outputCostPerTokenBatches, price.outputCostPerTokenBatches)
            price.inputCostPerTokenFlex = price.inputCostPerTokenFlex.map { $0 * factor }
            price.outputCostPerTokenFlex = price.outputCostPerTokenFlex.map { $0 * factor }
            price.cacheReadInputTokenCostFlex = price.cacheReadInputTokenCostFlex.map { $0 * factor }
            return price
        }
    }

    /// The window open at `date`; nil: none (the hours named `outside`).
    func window(at date: Date) -> Window? {
        let weekday = WallClock(date, in: weekdayTimeZone).weekday
        let wall = WallClock(date, in: timeZone)
        let minute = wall.hour * 60 + wall.minute
        return windows.first { $0.contains(weekday: weekday, minute: minute) }
    }

    /// What is billed at `date`: a window's name and prices, else `outside` at the entry's own.
    struct Period: Sendable, Equatable {
        var name: String
        /// nil: the entry's own prices.
        var prices: Prices?
    }

    func period(at date: Date) -> Period {
        let window = window(at: date)
        return Period(name: window?.name ?? outside, prices: window?.prices)
    }

    /// The first instant after `date` at which the prices change (to another window's, or to the
    /// entry's own), within `horizon`; nil: they do not change in it. Two windows of one name and
    /// the same prices (weekday nights and weekends) are one period.
    ///
    /// Prices change only at a window's start or end (read in `timeZone`) or at a midnight of
    /// `weekdayTimeZone`; those are stepped to, and where a zone's offset changes in between (a
    /// daylight-saving day), the minutes between are read one by one.
    func nextChange(after date: Date, horizon: TimeInterval = 8 * 86_400) -> Date? {
        let now = period(at: date)
        let limit = date + horizon
        var at = date
        while at < limit {
            let next = nextCandidate(after: at)
            if next > limit { return nil }
            let offsetsAlike =
                timeZone.secondsFromGMT(for: at) == timeZone.secondsFromGMT(for: next)
                && weekdayTimeZone.secondsFromGMT(for: at) == weekdayTimeZone.secondsFromGMT(for: next)
            if offsetsAlike {
                if period(at: next) != now { return next }
            } else {
                var minute = Self.minuteAfter(at)
                while minute <= next {
                    if period(at: minute) != now { return minute }
                    minute += 60
                }
            }
            at = next
        }
        return nil
    }

    /// The next window edge in `timeZone` or midnight in `weekdayTimeZone` after `date`, as if no
    /// offset changed on the way.
    private func nextCandidate(after date: Date) -> Date {
        let wall = WallClock(date, in: timeZone)
        let secondsIntoMinute = Int(date.timeIntervalSince1970.rounded(.down)) % 60
        let minute = wall.hour * 60 + wall.minute
        var edges: [Int] = [1_440]
        for window in windows {
            for hours in window.hours where !hours.wholeDay { edges += [hours.start, hours.end] }
        }
        let ahead = edges.map { edge in edge > minute ? edge - minute : edge + 1_440 - minute }.min() ?? 1_440
        let edge = date.addingTimeInterval(TimeInterval(ahead * 60 - secondsIntoMinute)).floorSecond
        let dayWall = WallClock(date, in: weekdayTimeZone)
        let intoDay = (dayWall.hour * 60 + dayWall.minute) * 60 + secondsIntoMinute
        let midnight = date.addingTimeInterval(TimeInterval(86_400 - intoDay)).floorSecond
        return min(edge, midnight)
    }

    private static func minuteAfter(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 60).rounded(.down) * 60 + 60)
    }
}

extension Date {
    /// This instant without its fraction of a second.
    fileprivate var floorSecond: Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}
