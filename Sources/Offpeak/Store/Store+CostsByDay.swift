import Foundation
import GRDB

extension Store {
    /// Spend grouped by the local calendar day (in `calendar`'s time zone) its calls were made,
    /// newest day first.
    ///
    /// SQLite knows no local time zone, so each day's bounds are computed here (a day around a DST
    /// change is 23 or 25 hours long, one whose midnight is skipped starts at 01:00) and its rows
    /// are summed in SQL over the ledger's time index, which covers every summed column: no row is
    /// read or decoded one by one. Only days with calls are visited: after each day, the next is the
    /// one holding the first row at or after its end. Rows add up in the order of `at`, then `id`,
    /// as they always have.
    func costsByDay(calendar: Calendar) throws(OffpeakError) -> [CostLine] {
        try read { db in
            var days: [String: Spend] = [:]
            var next = try Store.firstCall(db, atOrAfter: nil)
            while let at = next {
                let day = LedgerDay(containing: at, calendar: calendar)
                let row = try Row.fetchOne(
                    db, sql: "SELECT \(Store.spendColumns) FROM ledger WHERE at >= ? AND at < ?",
                    arguments: [day.start, day.end])
                days[day.text, default: Spend()].add(row.map(Store.spend) ?? Spend())
                next = try Store.firstCall(db, atOrAfter: day.end)
            }
            return days.keys.sorted(by: >).map { CostLine(key: $0, spend: days[$0] ?? Spend()) }
        }
    }

    /// When the ledger's first call at or after `start` (or its first call at all) was made.
    private static func firstCall(_ db: Database, atOrAfter start: Date?) throws -> Date? {
        let value =
            if let start {
                try DatabaseValue.fetchOne(
                    db, sql: "SELECT MIN(at) FROM ledger WHERE at >= ?", arguments: [start])
            } else {
                try DatabaseValue.fetchOne(db, sql: "SELECT MIN(at) FROM ledger")
            }
        guard let value, !value.isNull else { return nil }
        guard let date = Date.fromDatabaseValue(value) else {
            throw OffpeakError(
                .ioError, "the ledger has a row whose time (at) is unreadable: \(value); expected a date")
        }
        return date
    }
}

/// The local calendar day holding a call: its bounds, and its `YYYY-MM-DD` name.
struct LedgerDay {
    let start: Date
    /// The next day's start: a day is not always 24 hours long.
    let end: Date
    let text: String

    init(containing date: Date, calendar: Calendar) {
        start = calendar.startOfDay(for: date)
        let tomorrow = calendar.date(byAdding: .day, value: 1, to: start) ?? start + 86_400
        end = max(calendar.startOfDay(for: tomorrow), date + 0.001)
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        text = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
