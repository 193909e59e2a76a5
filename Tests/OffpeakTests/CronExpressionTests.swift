import Foundation
import Testing

@testable import Offpeak

/// Parsing cron expressions and finding when they fire, across time zones and DST changes.
struct CronExpressionTests {
    let utc = TimeZone.gmt
    let berlin = TimeZone(identifier: "Europe/Berlin") ?? .gmt
    let newYork = TimeZone(identifier: "America/New_York") ?? .gmt

    /// `text` (ISO-8601 with offset) as a date.
    func at(_ text: String) throws -> Date {
        try #require(try? Date(text, strategy: .iso8601), "bad date \(text)")
    }

    /// The next `count` fire times as ISO-8601 with the zone's offset.
    func times(_ expression: String, after: String, count: Int = 4, in zone: TimeZone) throws -> [String] {
        let cron = try CronExpression(expression)
        return cron.nextTimes(after: try at(after), count: count, in: zone).map { Self.format($0, in: zone) }
    }

    static func format(_ date: Date, in zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mmxxx EEE"
        return formatter.string(from: date)
    }

    /// The minutes, hours, ... a field allows.
    func values(_ field: CronField) -> [Int] {
        (0..<64).filter { field.contains($0) }
    }

    @Test func fieldsParseValuesRangesStepsListsAndNames() throws {
        let cron = try CronExpression("*/15 9-17/4 1,15,20-22 jan-MAR,Dec/1 Mon-fri")
        #expect(values(cron.minutes) == [0, 15, 30, 45])
        #expect(values(cron.hours) == [9, 13, 17])
        #expect(values(cron.daysOfMonth) == [1, 15, 20, 21, 22])
        #expect(values(cron.months) == [1, 2, 3, 12])
        #expect(values(cron.daysOfWeek) == [1, 2, 3, 4, 5])
        #expect(values(try CronExpression("5/20 * * * *").minutes) == [5, 25, 45])
        #expect(values(try CronExpression("* * * * 7").daysOfWeek) == [0])
        #expect(values(try CronExpression("* * * * 5-7").daysOfWeek) == [0, 5, 6])
        #expect(values(try CronExpression("* * * * 0-7").daysOfWeek) == [0, 1, 2, 3, 4, 5, 6])
        #expect(values(try CronExpression("* * * * */2").daysOfWeek) == [0, 2, 4, 6])
        #expect(values(try CronExpression("* * * * 1/2").daysOfWeek) == [1, 3, 5])
        #expect(values(try CronExpression("* * * * 7/3").daysOfWeek) == [0, 3, 6])
        #expect(values(try CronExpression("*/100 * * * *").minutes) == [0])
        #expect(values(try CronExpression("59/15 * * * *").minutes) == [59])
        #expect(values(try CronExpression("5-5 * * * *").minutes) == [5])
        #expect(try CronExpression("  0\t6 * * 1 \n").text == "0\t6 * * 1")
        #expect(throws: CronError.self) { try CronExpression("0 6 * * 1\n2") }
    }

    @Test func macrosStandForTheirFields() throws {
        let expected = [
            "@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@weekly": "0 0 * * 0",
            "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
        ]
        for (macro, fields) in expected {
            let a = try times(macro, after: "2026-05-17T10:20:00Z", in: utc)
            let b = try times(fields, after: "2026-05-17T10:20:00Z", in: utc)
            #expect(a == b, "\(macro)")
        }
        #expect(
            try times("@WEEKLY", after: "2026-05-17T10:20:00Z", count: 1, in: utc) == [
                "2026-05-24T00:00+00:00 Sun"
            ])
    }

    @Test func errorsNameTheFieldAndWhatWasExpected() {
        let cases = [
            "0 25 * * *": "hour: expected 0-23, got '25'",
            "60 * * * *": "minute: expected 0-59, got '60'",
            "0 0 0 * *": "day-of-month: expected 1-31, got '0'",
            "0 0 * 13 *": "month: expected 1-12 or JAN-DEC, got '13'",
            "0 0 * * 8": "day-of-week: expected 0-7 or SUN-SAT, got '8'",
            "0 0 * * funday": "day-of-week: expected 0-7 or SUN-SAT, got 'funday'",
            "0 0 * * 1-x": "day-of-week: expected 0-7 or SUN-SAT, got 'x' in '1-x'",
            "*/0 * * * *": "minute: expected a step of 1 or more after '/', got '*/0'",
            "1/2/3 * * * *": "minute: expected at most one '/step', got '1/2/3'",
            "1,,2 * * * *": "minute: expected a value, range or step between commas, got an empty one",
            "0 17-9 * * *": "hour: expected a range low-high with low <= high, got '17-9'",
            "0 0 * * 5-0":
                "day-of-week: expected a range low-high with low <= high, got '5-0' (Sunday is also 7: write 5-7)",
            "+5 * * * *": "minute: expected 0-59, got '+5'",
            "99999999999999999999 * * * *": "minute: expected 0-59, got '99999999999999999999'",
        ]
        for (text, message) in cases {
            #expect(throws: CronError.self, "\(text)") { try CronExpression(text) }
            do {
                _ = try CronExpression(text)
            } catch {
                #expect(error.description == message)
            }
        }
        for text in ["", "0 6 * *", "0 6 * * * *", "@often", "@"] {
            #expect(throws: CronError.self, "\(text)") { try CronExpression(text) }
        }
        #expect(
            throws: CronError(
                field: nil,
                "expected one of @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually, got '@often'"
            )
        ) {
            try CronExpression("@often")
        }
    }

    @Test func anyInputParsesOrThrowsAndNeverCrashes() {
        var generator = CronGenerator(seed: 42)
        let alphabet = Array("0123456789*/-,@ \tLW#?abcdefghijklmnopqrstuvwxyzJANFEBSUNMON\u{00E9}+")
        var parsed = 0
        for round in 0..<20_000 {
            // Half random text, half valid expressions with a few characters changed.
            var text = Array(generator.expression())
            if round % 2 == 0 {
                text = (0..<generator.int(0...24)).map { _ in generator.pick(alphabet) }
            } else {
                for _ in 0..<generator.int(1...2) {
                    text[generator.int(0...(text.count - 1))] = generator.pick(alphabet)
                }
            }
            if let cron = try? CronExpression(String(text)) {
                parsed += 1
                _ = cron.nextTimes(after: Date(timeIntervalSince1970: 1_700_000_000), count: 3, in: berlin)
            }
        }
        #expect(parsed > 0)
        let cron = try? CronExpression("* * * * *")
        #expect(cron?.next(after: Date(timeIntervalSince1970: 1e15), in: utc) == nil)
        #expect(cron?.next(after: .distantFuture, in: utc) != nil)
        #expect(cron?.next(after: Date(timeIntervalSince1970: .nan), in: utc) == nil)
        #expect(cron?.next(after: Date(timeIntervalSince1970: -.infinity), in: utc) == nil)
    }

    @Test func nextIsStrictlyAfterAndSkipsAhead() throws {
        #expect(
            try times("0 6 * * *", after: "2026-05-17T06:00:00Z", count: 2, in: utc)
                == ["2026-05-18T06:00+00:00 Mon", "2026-05-19T06:00+00:00 Tue"])
        #expect(
            try times("0 6 * * *", after: "2026-05-17T05:59:59Z", count: 1, in: utc) == [
                "2026-05-17T06:00+00:00 Sun"
            ])
        #expect(
            try times("0 0 29 2 *", after: "2026-01-01T00:00:00Z", count: 2, in: utc)
                == ["2028-02-29T00:00+00:00 Tue", "2032-02-29T00:00+00:00 Sun"])
        #expect(
            try times("0 0 29 2 *", after: "2096-03-01T00:00:00Z", count: 1, in: utc) == [
                "2104-02-29T00:00+00:00 Fri"
            ])
        #expect(
            try times("59 23 31 12 *", after: "2026-12-31T23:59:00Z", count: 1, in: utc) == [
                "2027-12-31T23:59+00:00 Fri"
            ])
    }

    @Test func impossibleExpressionsHaveNoNextTime() throws {
        for text in ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 31 2 */2"] {
            let cron = try CronExpression(text)
            #expect(cron.next(after: try at("2026-01-01T00:00:00Z"), in: utc) == nil, "\(text)")
        }
        #expect(try CronExpression("0 0 30 2 1").next(after: try at("2026-01-01T00:00:00Z"), in: utc) != nil)
    }

    @Test func dayOfMonthOrDayOfWeekWhenBothAreRestricted() throws {
        // 2026-06: the 1st is a Monday. Both restricted: the 13th OR any Friday.
        #expect(
            try times("0 0 13 * 5", after: "2026-06-01T00:00:00Z", count: 4, in: utc) == [
                "2026-06-05T00:00+00:00 Fri", "2026-06-12T00:00+00:00 Fri", "2026-06-13T00:00+00:00 Sat",
                "2026-06-19T00:00+00:00 Fri",
            ])
        // One is `*`: only the other restricts.
        #expect(
            try times("0 0 13 * *", after: "2026-06-01T00:00:00Z", count: 1, in: utc) == [
                "2026-06-13T00:00+00:00 Sat"
            ])
        #expect(
            try times("0 0 * * 5", after: "2026-06-01T00:00:00Z", count: 1, in: utc) == [
                "2026-06-05T00:00+00:00 Fri"
            ])
        // Starting with `*` counts as unrestricted for the OR rule (vixie): odd days that are Fridays.
        #expect(
            try times("0 0 */2 * 5", after: "2026-06-01T00:00:00Z", count: 2, in: utc)
                == ["2026-06-05T00:00+00:00 Fri", "2026-06-19T00:00+00:00 Fri"])
    }

    @Test func timesAreWallClockTimesOfTheZone() throws {
        #expect(
            try times("0 9 * * 1-5", after: "2026-05-15T12:00:00+02:00", count: 2, in: berlin)
                == ["2026-05-18T09:00+02:00 Mon", "2026-05-19T09:00+02:00 Tue"])
        #expect(
            try times("0 9 * * *", after: "2026-05-15T12:00:00Z", count: 1, in: newYork) == [
                "2026-05-15T09:00-04:00 Fri"
            ])
        let kolkata = try #require(TimeZone(identifier: "Asia/Kolkata"))
        #expect(
            try times("30 0 * * *", after: "2026-05-15T00:00:00Z", count: 1, in: kolkata) == [
                "2026-05-16T00:30+05:30 Sat"
            ])
    }

    @Test func skippedWallClockTimesFireAtTheJump() throws {
        // Berlin, 2026-03-29: 02:00 CET jumps to 03:00 CEST.
        #expect(
            try times("30 2 * * *", after: "2026-03-28T00:00:00+01:00", count: 3, in: berlin) == [
                "2026-03-28T02:30+01:00 Sat", "2026-03-29T03:00+02:00 Sun", "2026-03-30T02:30+02:00 Mon",
            ])
        #expect(
            try times("*/20 2 * * *", after: "2026-03-29T01:00:00+01:00", count: 2, in: berlin)
                == ["2026-03-29T03:00+02:00 Sun", "2026-03-30T02:00+02:00 Mon"])
        // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT.
        #expect(
            try times("30 2 * * *", after: "2026-03-07T12:00:00-05:00", count: 2, in: newYork)
                == ["2026-03-08T03:00-04:00 Sun", "2026-03-09T02:30-04:00 Mon"])
        // Every hour: the vanished hour's slot is skipped, not made up (as croniter does).
        #expect(
            try times("42 * * * *", after: "2026-03-29T01:00:00+01:00", count: 2, in: berlin)
                == ["2026-03-29T01:42+01:00 Sun", "2026-03-29T03:42+02:00 Sun"])
    }

    @Test func repeatedWallClockTimesFireOnce() throws {
        // Berlin, 2026-10-25: 03:00 CEST goes back to 02:00 CET; 02:00-02:59 happens twice.
        #expect(
            try times("30 2 * * *", after: "2026-10-24T12:00:00+02:00", count: 3, in: berlin) == [
                "2026-10-25T02:30+02:00 Sun", "2026-10-26T02:30+01:00 Mon", "2026-10-27T02:30+01:00 Tue",
            ])
        #expect(
            try times("0 * * * *", after: "2026-10-25T01:30:00+02:00", count: 3, in: berlin) == [
                "2026-10-25T02:00+02:00 Sun", "2026-10-25T03:00+01:00 Sun", "2026-10-25T04:00+01:00 Sun",
            ])
        // From inside the second pass, the times already fired in the first are not fired again.
        #expect(
            try times("*/20 * * * *", after: "2026-10-25T02:10:00+01:00", count: 1, in: berlin)
                == ["2026-10-25T03:00+01:00 Sun"])
        // New York, 2026-11-01: 01:00-01:59 happens twice.
        #expect(
            try times("30 1 * * *", after: "2026-10-31T12:00:00-04:00", count: 2, in: newYork)
                == ["2026-11-01T01:30-04:00 Sun", "2026-11-02T01:30-05:00 Mon"])
    }
}
