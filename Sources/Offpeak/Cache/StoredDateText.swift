import Foundation
import GRDB

/// A date in the text form the store keeps dates in (GRDB's "yyyy-MM-dd HH:mm:ss.SSS", UTC), written
/// by hand: a lookup compares an entry's `expires_at` with its `now` in that form.
///
/// Comparing the text is what `purge(.expired)` and GRDB's own date arguments do; it orders as the
/// dates do, four-digit years being all the store holds (`StoredDate`). SQLite's
/// `julianday(expires_at)` parsed the text on every lookup instead, about 0.4 µs of a 3 µs hit
/// (measured with the same statement in C); GRDB's formatter (a `DateFormatter`) costs more still.
/// The text is GRDB's exactly (`StoredDateTextTests`): milliseconds rounded to the nearest, as
/// Foundation's formatter rounds them, so an entry a lookup finds fresh at `now` is one
/// `purge(.expired, now:)` keeps, and the other way round.
enum StoredDateText {
    /// The length of the text: "2026-11-25 15:00:18.123".
    static let count = 23

    /// 1583-01-01T00:00:00Z: Foundation's Gregorian calendar writes earlier dates in the Julian
    /// calendar, which this leaves to it.
    static let earliest = Date(timeIntervalSince1970: -12_212_553_600)

    /// Lends `body` the text of `date`; a date before `earliest` or past what the store holds is
    /// formatted by GRDB.
    static func withText<Result>(_ date: Date, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result)
        rethrows -> Result
    {
        guard date >= earliest, date <= StoredDate.latest else {
            var text = String.fromDatabaseValue(date.databaseValue) ?? ""
            return try text.withUTF8(body)
        }
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000 + 0.5).rounded(.down))
        let (days, time) = floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = civil(days: days)
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { text in
            var index = 0
            func put(_ value: Int64, digits: Int, then separator: UInt8?) {
                var divisor: Int64 = 1
                for _ in 1..<digits { divisor *= 10 }
                for _ in 0..<digits {
                    text[index] = UInt8(ascii: "0") + UInt8(value / divisor % 10)
                    index += 1
                    divisor /= 10
                }
                if let separator {
                    text[index] = separator
                    index += 1
                }
            }
            put(year, digits: 4, then: UInt8(ascii: "-"))
            put(month, digits: 2, then: UInt8(ascii: "-"))
            put(day, digits: 2, then: UInt8(ascii: " "))
            put(time / 3_600_000, digits: 2, then: UInt8(ascii: ":"))
            put(time / 60_000 % 60, digits: 2, then: UInt8(ascii: ":"))
            put(time / 1000 % 60, digits: 2, then: UInt8(ascii: "."))
            put(time % 1000, digits: 3, then: nil)
            return try body(UnsafeBufferPointer(text))
        }
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64)
    {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
    /// `civil_from_days`).
    private static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
