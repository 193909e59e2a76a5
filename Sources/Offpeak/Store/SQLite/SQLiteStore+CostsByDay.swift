import Foundation
import GRDB

extension SQLiteStore {
    func costsByDay(calendar: Calendar, since: Date?) throws(OffpeakError) -> [CostLine] {
        try read { db in
            try LedgerDay.costs(
                calendar: calendar, since: since,
                firstCall: { start in try SQLiteStore.firstCall(db, atOrAfter: start) },
                spend: { day in
                    let row = try Row.fetchOne(
                        db, sql: "SELECT \(SQLiteStore.spendColumns) FROM ledger WHERE at >= ? AND at < ?",
                        arguments: [day.start, day.end])
                    return try row.map(SQLiteStore.spend) ?? Spend()
                })
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
