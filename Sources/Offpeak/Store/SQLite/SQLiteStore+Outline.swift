import Foundation
import GRDB

extension SQLiteStore {
    func outlines(runID: String) throws(OffpeakError) -> [RequestOutline] {
        try read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT id, item_id, state, error, source FROM requests WHERE run_id = ? ORDER BY position
                    """, arguments: [runID])
            var outlines: [RequestOutline] = []
            while let row = try rows.next() { outlines.append(try Self.outline(row)) }
            return outlines
        }
    }

    func forEachResult(runID: String, _ body: (ResultRecord) throws -> Void) throws(OffpeakError) {
        try read { db in
            let results = try ResultRecord.filter(Column("run_id") == runID).fetchCursor(db)
            while let result = try results.next() { try body(result) }
        }
    }

    func summary(runID: String, state: RequestRecord.State) throws(OffpeakError) -> StateSummary {
        try read { db in
            let count =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM requests WHERE run_id = ? AND state = ?",
                    arguments: [runID, state.rawValue]) ?? 0
            guard count > 0 else { return StateSummary() }
            // SQLite puts NULL first in ascending order: a retry with no time is due first.
            let order = state == .retrying ? "next_attempt_at, position" : "position"
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT id, item_id, state, error, source, next_attempt_at FROM requests
                        WHERE run_id = ? AND state = ? ORDER BY \(order) LIMIT 1
                        """, arguments: [runID, state.rawValue])
            else { return StateSummary(count: count) }
            return StateSummary(
                count: count, first: try Self.outline(row),
                firstDue: try row.decode(Date?.self, forColumn: "next_attempt_at"))
        }
    }

    private static func outline(_ row: Row) throws -> RequestOutline {
        // Throwing decodes: a damaged row is an error, never a trap.
        let id = try row.decode(String.self, forColumn: "id")
        let state = try row.decode(String.self, forColumn: "state")
        guard let known = RequestRecord.State(rawValue: state) else {
            throw OffpeakError(.dataError, "stored request \(id) has an unknown state \"\(state)\"")
        }
        let source = try row.decode(String.self, forColumn: "source")
        guard let from = RequestSource(rawValue: source) else {
            throw OffpeakError(.dataError, "stored request \(id) has an unknown source \"\(source)\"")
        }
        return RequestOutline(
            id: id, itemId: try row.decode(String.self, forColumn: "item_id"), state: known,
            error: try row.decode(String?.self, forColumn: "error"),
            source: from)
    }
}
