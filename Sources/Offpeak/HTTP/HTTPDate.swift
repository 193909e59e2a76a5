import Foundation

/// An HTTP date (`Date: Sun, 29 Nov 2026 08:47:31 GMT`, RFC 9110's IMF-fixdate): when the server
/// made its response, by the server's clock.
enum HTTPDate {
    private static let months = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]

    /// The instant `text` names; nil when it is not an IMF-fixdate (the obsolete forms are not read).
    static func parse(_ text: String?) -> Date? {
        guard let text else { return nil }
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let year = Int(parts[3]),
            let month = months.firstIndex(of: parts[2].lowercased()).map({ $0 + 1 })
        else { return nil }
        let time = parts[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3, (1...31).contains(day), time[0] < 24, time[1] < 60, time[2] < 61 else {
            return nil
        }
        let days = CivilCalendar.days(year: year, month: month, day: day)
        return Date(
            timeIntervalSince1970: TimeInterval(days * 86_400 + time[0] * 3_600 + time[1] * 60 + time[2]))
    }
}
