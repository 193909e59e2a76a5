import Foundation
import GRDB
import PostgresNIO
import Testing

@testable import Offpeak

/// A value a test binds into a statement run on either engine (`Store.execute`).
protocol EngineValue: DatabaseValueConvertible, PostgresEncodable, Sendable {}
/// A value a test reads from a statement run on either engine (`Store.values`).
protocol EngineColumn: DatabaseValueConvertible, PostgresDecodable, Sendable where _DecodableType == Self {}

extension String: EngineValue, EngineColumn {}
extension Int: EngineValue, EngineColumn {}
extension Double: EngineValue, EngineColumn {}
extension Bool: EngineValue, EngineColumn {}
extension Date: EngineValue, EngineColumn {}
extension Data: EngineValue, EngineColumn {}

/// What a test sets up or looks at behind the roles' backs, on whichever engine the workspace's
/// store is (`TestStore`): rows written as an older offpeak or another program would, damage, and
/// counts no role reads. The statement must mean the same on SQLite and PostgreSQL (the schemas
/// name the same tables and columns); `?` marks each argument, in order.
extension Store {
    /// Runs one statement.
    func execute(_ sql: String, _ arguments: [(any EngineValue)?] = []) throws {
        switch engine {
        case .sqlite(let sqlite):
            try sqlite.write { db in
                try db.execute(
                    sql: sql,
                    arguments: StatementArguments(arguments.map { $0 as (any DatabaseValueConvertible)? }))
            }
        case .postgres(let postgres):
            try postgres.store.query(try Self.postgresQuery(sql, arguments))
        }
    }

    /// The first column of every row the query gives.
    func values<Value: EngineColumn>(
        _ sql: String, _ arguments: [(any EngineValue)?] = [], as type: Value.Type = Value.self
    ) throws -> [Value?] {
        switch engine {
        case .sqlite(let sqlite):
            return try sqlite.read { db in
                try Row.fetchAll(
                    db, sql: sql,
                    arguments: StatementArguments(arguments.map { $0 as (any DatabaseValueConvertible)? })
                ).map { row in row[0] as Value? }
            }
        case .postgres(let postgres):
            return try postgres.store.query(try Self.postgresQuery(sql, arguments)).map { row in
                let cells = row.makeRandomAccess()
                return try cells[0].decode(Value?.self, context: .default)
            }
        }
    }

    /// The first column of the query's one row (`COUNT(*)`, a sum), which must not be NULL.
    func value<Value: EngineColumn>(
        _ sql: String, _ arguments: [(any EngineValue)?] = [], as type: Value.Type = Value.self
    ) throws -> Value {
        let values = try values(sql, arguments, as: Value.self)
        guard values.count == 1, let value = values[0] else {
            throw OffpeakError(.software, "expected one value, not \(values), from: \(sql)")
        }
        return value
    }

    /// How many rows `table` holds (those matching `condition`, when given).
    func count(_ table: String, where condition: String? = nil, _ arguments: [(any EngineValue)?] = [])
        throws -> Int
    {
        try value("SELECT COUNT(*) FROM \(table)" + (condition.map { " WHERE \($0)" } ?? ""), arguments)
    }

    /// Ledger rows written as they are, without a call's commit (no run progress, no latency
    /// sample): what an older offpeak or a test's history left.
    func insertLedger(_ entries: [LedgerEntry]) throws {
        switch engine {
        case .sqlite(let sqlite):
            try sqlite.write { db in
                for entry in entries {
                    var entry = entry
                    try entry.insert(db)
                }
            }
        case .postgres(let postgres):
            _ = try postgres.store.transaction { () throws(OffpeakError) in
                try postgres.insertLedger(entries, latency: nil)
            }
        }
    }

    /// The answer cache's running totals (`cache_totals`, kept by triggers on both engines).
    func cacheTotals() throws -> (entries: Int, rawBytes: Int, storedBytes: Int) {
        switch engine {
        case .sqlite(let sqlite):
            return try sqlite.reading { sql throws(OffpeakError) in try CacheRules.totals(sql) }
        case .postgres(let postgres):
            return try postgres.reading { sql throws(OffpeakError) in try CacheRules.totals(sql) }
        }
    }

    /// A run's items recounted from its requests and results, as `itemCounts` must equal.
    func recountItems(runID: String) throws -> ItemCounts {
        let steps = "('\(RequestSource.chunk.rawValue)', '\(RequestSource.reduce.rawValue)')"
        let items = "run_id = ? AND source NOT IN \(steps)"
        return ItemCounts(
            requests: try count("requests", where: "run_id = ?", [runID]),
            total: try count("requests", where: items, [runID]),
            done: try count("requests", where: "\(items) AND state = ?", [runID, "done"]),
            failed: try count("requests", where: "\(items) AND state = ?", [runID, "failed"]),
            cached: try count(
                "requests JOIN results ON results.request_id = requests.id",
                where: "requests.\(items) AND results.from_cache", [runID]))
    }

    /// `sql` with its `?` marks numbered as PostgreSQL's (`$1`, …; none inside a quoted string).
    private static func postgresQuery(_ sql: String, _ arguments: [(any EngineValue)?]) throws
        -> PostgresQuery
    {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            if let argument { try bindings.append(argument) } else { bindings.appendNull() }
        }
        var numbered = ""
        var mark = 0
        var quoted = false
        for character in sql {
            if character == "'" { quoted.toggle() }
            if character == "?", !quoted {
                mark += 1
                numbered += "$\(mark)"
            } else {
                numbered.append(character)
            }
        }
        return PostgresQuery(unsafeSQL: numbered, binds: bindings)
    }
}
