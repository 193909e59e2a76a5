import Foundation
import GRDB

/// When a scheduled job last fired and is next due: a row of `schedules`.
struct ScheduleRecord: StoredRecord, PersistableRecord, Equatable {
    static let databaseTableName = "schedules"

    var job: String
    /// The cron expression and the zone it is read in, as `0 6 * * 1 TZ=Europe/Berlin`, so that a
    /// change to either is noticed (the table has no column of its own for the zone).
    var expression: String
    var lastFiredAt: Date?
    /// `nil` when the expression never fires (`0 0 30 2 *`).
    var nextDueAt: Date?

    private static let zoneMarker = " TZ="

    /// The stored form of `expression` read in the zone named `timeZone`.
    static func key(_ expression: String, timeZone: String) -> String {
        expression + zoneMarker + timeZone
    }

    /// The cron expression without the zone.
    var cron: String {
        guard let marker = expression.range(of: Self.zoneMarker, options: .backwards) else {
            return expression
        }
        return String(expression[..<marker.lowerBound])
    }

    /// The zone's identifier, if one was stored.
    var timeZone: String? {
        guard let marker = expression.range(of: Self.zoneMarker, options: .backwards) else { return nil }
        return String(expression[marker.upperBound...])
    }
}
