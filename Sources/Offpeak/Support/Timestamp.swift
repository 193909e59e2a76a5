import Foundation

/// How offpeak writes instants for people: ISO-8601 with the local offset, to the second.
enum Timestamp {
    static func text(_ date: Date, in zone: TimeZone = .current) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: zone))
    }
}
