import Foundation

/// A minute of wall-clock time (what a clock on the wall shows), and how it maps to instants in a
/// time zone. Calendar arithmetic is done on plain integers (proleptic Gregorian), so the search for
/// the next fire time asks Foundation only to convert between wall-clock time and instants.
struct WallClock: Sendable, Equatable, Comparable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int

    /// The wall-clock minute `date` falls in, in `timeZone`.
    init(_ date: Date, in timeZone: TimeZone) {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let local = seconds + timeZone.secondsFromGMT(for: date)
        let days = CivilCalendar.floorDivide(local, 86_400)
        let secondOfDay = local - days * 86_400
        (year, month, day) = CivilCalendar.civil(fromDays: days)
        hour = secondOfDay / 3_600
        minute = secondOfDay % 3_600 / 60
    }

    init(year: Int, month: Int, day: Int, hour: Int, minute: Int) {
        (self.year, self.month, self.day, self.hour, self.minute) = (year, month, day, hour, minute)
    }

    static func < (lhs: WallClock, rhs: WallClock) -> Bool {
        (lhs.year, lhs.month, lhs.day, lhs.hour, lhs.minute) < (
            rhs.year, rhs.month, rhs.day, rhs.hour, rhs.minute
        )
    }

    /// 0 = Sunday … 6 = Saturday.
    var weekday: Int {
        let days = CivilCalendar.days(year: year, month: month, day: day)
        return ((days + 4) % 7 + 7) % 7  // 1970-01-01 was a Thursday
    }

    var daysInMonth: Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Seconds since 1970-01-01T00:00 of this wall-clock time read as if it were UTC.
    var localSeconds: Int {
        CivilCalendar.days(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60
    }

    // MARK: Moving forward

    mutating func startNextMonth() {
        (day, hour, minute) = (1, 0, 0)
        month += 1
        if month > 12 { (year, month) = (year + 1, 1) }
    }

    mutating func startNextDay() {
        (hour, minute) = (0, 0)
        day += 1
        if day > daysInMonth { startNextMonth() }
    }

    mutating func startNextHour() {
        minute = 0
        hour += 1
        if hour > 23 { startNextDay() }
    }

    mutating func addMinute() {
        minute += 1
        if minute > 59 { startNextHour() }
    }

    // MARK: To instants

    /// The instant this wall-clock time names in `timeZone`; when clocks go back and it happens
    /// twice, the first. `nil` when clocks jump forward over it.
    func firstInstant(in timeZone: TimeZone) -> Date? {
        let local = localSeconds
        let valid = Self.offsets(near: local, in: timeZone).map { local - $0 }.filter {
            timeZone.secondsFromGMT(for: Self.date($0)) == local - $0
        }
        return valid.min().map(Self.date)
    }

    /// For a wall-clock time clocks jump forward over: the first instant after the jump.
    func endOfGap(in timeZone: TimeZone) -> Date {
        let local = localSeconds
        let offsets = Self.offsets(near: local, in: timeZone)
        // Before the gap the offset is smaller, after it larger: wall-clock time at `low` is still
        // before this one, at `high` already past it. Bisect between them.
        var low = local - (offsets.max() ?? 0)
        var high = local - (offsets.min() ?? 0)
        let wall = { (instant: Int) in instant + timeZone.secondsFromGMT(for: Self.date(instant)) }
        guard low < high, wall(low) <= local, wall(high) > local else { return Self.date(high) }
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if wall(middle) > local { high = middle } else { low = middle }
        }
        return Self.date(high)
    }

    /// The UTC offsets `timeZone` uses within two days of `local`.
    private static func offsets(near local: Int, in timeZone: TimeZone) -> Set<Int> {
        Set([-2, -1, 0, 1, 2].map { timeZone.secondsFromGMT(for: date(local + $0 * 86_400)) })
    }

    private static func date(_ seconds: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
