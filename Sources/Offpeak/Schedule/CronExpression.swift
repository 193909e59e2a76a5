import Foundation

/// A parsed 5-field cron expression (minute hour day-of-month month day-of-week) or macro, and when
/// it fires in a time zone.
///
/// Syntax is vixie/POSIX cron's: `*`, values, `a-b` ranges, `*/n`, `a-b/n` and `a/n` steps, lists,
/// `JAN`–`DEC` and `SUN`–`SAT` (any case), 7 as another Sunday, and `@hourly`, `@daily`, `@midnight`,
/// `@weekly`, `@monthly`, `@yearly`, `@annually`. When both day fields are restricted (neither starts
/// with `*`), a day matches if either does; otherwise both must.
///
/// Fire times are wall-clock times. A time that happens twice when clocks go back fires once, the
/// first time (croniter fires it twice). A time skipped when clocks jump forward fires at the jump,
/// unless the expression runs every hour: then, as in croniter, the vanished slots are skipped.
public struct CronExpression: Sendable, Equatable, CustomStringConvertible {
    /// The expression as written, trimmed.
    public let text: String
    let minutes: CronField
    let hours: CronField
    let daysOfMonth: CronField
    let months: CronField
    let daysOfWeek: CronField

    /// The macros and the 5 fields each stands for.
    static let macros: [(name: String, fields: String)] = [
        ("@hourly", "0 * * * *"), ("@daily", "0 0 * * *"), ("@midnight", "0 0 * * *"),
        ("@weekly", "0 0 * * 0"), ("@monthly", "0 0 1 * *"), ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
    ]

    /// How far ahead `next(after:in:)` looks: the longest gap between two fire times of a possible
    /// expression is 8 years (29 February across a century that is not a leap year).
    static let searchYears = 8

    /// The hour field's mask when it allows every hour.
    static let everyHour: UInt64 = (1 << 24) - 1

    /// Parses `text`.
    /// - Throws: `CronError` naming the field and what was expected there.
    public init(_ text: String) throws(CronError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        self.text = trimmed
        var fieldsText = trimmed
        if trimmed.hasPrefix("@") {
            guard let macro = Self.macros.first(where: { $0.name == trimmed.lowercased() }) else {
                let names = Self.macros.map(\.name).joined(separator: ", ")
                throw CronError(field: nil, "expected one of \(names), got '\(trimmed)'")
            }
            fieldsText = macro.fields
        }
        let fields = fieldsText.split(whereSeparator: \.isWhitespace).map(String.init)
        guard fields.count == 5 else {
            let macros = Self.macros.map(\.name).joined(separator: ", ")
            throw CronError(
                field: nil,
                "expected 5 cron fields (minute hour day-of-month month day-of-week) or one of \(macros), "
                    + "got \(fields.count) field\(fields.count == 1 ? "" : "s") in '\(trimmed)'")
        }
        minutes = try CronField(fields[0], kind: .minute)
        hours = try CronField(fields[1], kind: .hour)
        daysOfMonth = try CronField(fields[2], kind: .dayOfMonth)
        months = try CronField(fields[3], kind: .month)
        daysOfWeek = try CronField(fields[4], kind: .dayOfWeek)
    }

    public var description: String { text }

    /// The first fire time strictly after `after`, in wall-clock time of `timeZone`; `nil` when
    /// there is none within 8 years (`0 0 30 2 *`) or `after` is outside years 1–9999.
    func next(after: Date, in timeZone: TimeZone) -> Date? {
        let seconds = after.timeIntervalSince1970
        guard seconds.isFinite, seconds > -62_000_000_000, seconds < 253_000_000_000 else { return nil }
        var wall = WallClock(after, in: timeZone)
        wall.addMinute()
        let lastYear = wall.year + Self.searchYears
        while wall.year <= lastYear {
            guard months.contains(wall.month) else {
                wall.startNextMonth()
                continue
            }
            guard matchesDay(wall) else {
                wall.startNextDay()
                continue
            }
            guard let hour = hours.first(atOrAfter: wall.hour) else {
                wall.startNextDay()
                continue
            }
            if hour != wall.hour { (wall.hour, wall.minute) = (hour, 0) }
            guard let minute = minutes.first(atOrAfter: wall.minute) else {
                wall.startNextHour()
                continue
            }
            wall.minute = minute
            let instant: Date
            if let existing = wall.firstInstant(in: timeZone) {
                instant = existing
            } else if hours.mask == Self.everyHour {
                // Clocks jumped over this time. A job that runs every hour is not owed the slots of
                // the hour that vanished (croniter and vixie cron skip them too).
                wall.addMinute()
                continue
            } else {
                instant = wall.endOfGap(in: timeZone)
            }
            // Only the second pass through an hour clocks went back over yields an earlier instant.
            if instant > after { return instant }
            wall.addMinute()
        }
        return nil
    }

    /// The next `count` fire times after `after`, fewer if the expression stops firing.
    public func nextTimes(after: Date, count: Int, in timeZone: TimeZone) -> [Date] {
        var times: [Date] = []
        var from = after
        while times.count < count, let time = next(after: from, in: timeZone) {
            times.append(time)
            from = time
        }
        return times
    }

    /// POSIX: day-of-month OR day-of-week when both are restricted, else AND (a `*` matches all).
    func matchesDay(_ wall: WallClock) -> Bool {
        let dayOfMonth = daysOfMonth.contains(wall.day)
        let dayOfWeek = daysOfWeek.contains(wall.weekday)
        if daysOfMonth.startsWithStar || daysOfWeek.startsWithStar { return dayOfMonth && dayOfWeek }
        return dayOfMonth || dayOfWeek
    }
}
