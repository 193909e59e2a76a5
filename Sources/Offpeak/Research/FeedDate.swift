import Foundation

/// The dates feeds carry: RSS's RFC 822 (`Mon, 02 Jan 2006 15:04:05 -0700`) and Atom's RFC 3339
/// (`2006-01-02T15:04:05.123+02:00`), read by hand rather than by `DateFormatter`, which needs a
/// format (and a locale) per variant and feeds write many: no weekday, two-digit years, no
/// seconds, named zones, a date alone. Anything unreadable is `nil`: a date only orders entries.
enum FeedDate {
    /// An RFC 822 / RFC 2822 date as RSS writes it; the weekday, seconds and zone may be missing
    /// (no zone is UTC), and month names may be written out (`June`).
    static func rfc822(_ text: String) -> Date? {
        var words = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" })
            .map(String.init)
        if let first = words.first, Int(first) == nil { words.removeFirst() }
        guard words.count >= 4, let day = Int(words[0]), let month = month(words[1]),
            var year = Int(words[2])
        else { return nil }
        if words[2].count <= 2 { year += year < 50 ? 2000 : 1900 }
        let clock = words[3].split(separator: ":").map { Int($0) }
        guard clock.count == 2 || clock.count == 3, let hour = clock[0], let minute = clock[1] else {
            return nil
        }
        let second = clock.count == 3 ? clock[2] : 0
        // RFC 2822: a zone it does not know (the old military letters) is to be read as UTC.
        let zone = words.count > 4 ? words[4] : "GMT"
        guard let second, let offset = zoneOffset(zone) ?? (zone.allSatisfy(\.isLetter) ? 0 : nil) else {
            return nil
        }
        return date(year, month, day, hour, minute, Double(second), offset: offset)
    }

    /// An RFC 3339 timestamp (`T`, `t` or a space between date and time; fractional seconds; `Z`
    /// or `±hh:mm`), or a date alone (`2006-01-02`, midnight UTC), as Atom and Dublin Core write them.
    static func rfc3339(_ text: String) -> Date? {
        let scalars = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= scalars.count else { return nil }
            var value = 0
            for scalar in scalars[index..<index + digits] {
                guard ("0"..."9").contains(scalar) else { return nil }
                value = value * 10 + Int(scalar.value - 48)
            }
            index += digits
            return value
        }
        func skip(_ allowed: Set<Unicode.Scalar>) -> Bool {
            guard index < scalars.count, allowed.contains(scalars[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip(["-"]), let month = number(2), skip(["-"]), let day = number(2)
        else { return nil }
        if index == scalars.count { return date(year, month, day, 0, 0, 0, offset: 0) }
        guard skip(["T", "t", " "]), let hour = number(2), skip([":"]), let minute = number(2) else {
            return nil
        }
        var second = 0.0
        if skip([":"]) {
            guard let whole = number(2) else { return nil }
            second = Double(whole)
            if skip([".", ","]) {
                let start = index
                while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
                let digits = String(String.UnicodeScalarView(scalars[start..<index]))
                guard !digits.isEmpty, let fraction = Double("0." + digits) else { return nil }
                second += fraction
            }
        }
        let zone = String(String.UnicodeScalarView(scalars[index...]))
        guard let offset = zone.isEmpty ? 0 : zoneOffset(zone) else { return nil }
        return date(year, month, day, hour, minute, second, offset: offset)
    }

    /// Seconds east of UTC for `Z`, `GMT`, `+0200`, `-05:00` or a US zone name.
    private static func zoneOffset(_ zone: String) -> Int? {
        let named = [
            "Z": 0, "UT": 0, "UTC": 0, "GMT": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7,
            "MDT": -6, "PST": -8, "PDT": -7,
        ]
        if let hours = named[zone.uppercased()] { return hours * 3600 }
        guard let sign = zone.first, sign == "+" || sign == "-" else { return nil }
        let digits = zone.dropFirst().filter { $0 != ":" }
        guard digits.count == 4, digits.allSatisfy(\.isASCII), let value = Int(digits) else { return nil }
        let (hours, minutes) = (value / 100, value % 100)
        guard hours < 24, minutes < 60 else { return nil }
        return (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    private static func month(_ name: String) -> Int? {
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        return months.firstIndex(of: String(name.prefix(3)).lowercased()).map { $0 + 1 }
    }

    /// The instant of a civil date and time at `offset` seconds east of UTC, or `nil` when a
    /// field is out of range (a 31 June, a 25th hour). Days are counted from the civil date
    /// directly (H. Hinnant's `days_from_civil`), so no calendar or time zone object is needed.
    private static func date(
        _ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Double, offset: Int
    ) -> Date? {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...9999).contains(year), (1...12).contains(month), (1...lengths[month - 1]).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), second >= 0, second < 61
        else { return nil }
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 - offset) + second
        return Date(timeIntervalSince1970: seconds)
    }
}
