import Foundation
import GRDB

/// The SQLite engine under the rules written once (`SQLEngine`): a read is a snapshot of the pool,
/// a write one transaction of its one writer; values are bound as GRDB keeps them (a date as UTC
/// text that sorts as time does, a Bool as 0 or 1).
extension SQLiteStore: SQLEngine {
    func reading<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        try read { db in try body(SQLiteConnection(db: db)) }
    }

    func writing<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        let locks = SQLiteConnection.Locks()
        defer { if locks.cache { CacheLookups.noteWrite() } }
        return try write { db in try body(SQLiteConnection(db: db, locks: locks)) }
    }

    /// The writer syncs every commit (`synchronous = FULL`, `prepareWriter`); this one goes at
    /// `NORMAL`, which in WAL mode survives a kill of the process.
    func writingLightly<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        do {
            return try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                defer { try? db.execute(sql: "PRAGMA synchronous = FULL") }
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(SQLiteConnection(db: db, locks: SQLiteConnection.Locks()))
                    return .commit
                }
                guard let result else { throw OffpeakError(.ioError, "a write transaction returned nothing") }
                return result
            }
        } catch { throw SQLiteStore.failure(error) }
    }
}

/// The roles written once, above both engines.
extension SQLiteStore: HostStore, JobSpecStore, LimitStore {}

/// Statements on one of GRDB's connections, inside the read or write the engine opened.
struct SQLiteConnection: SQLConnection {
    let db: Database
    /// The locks the transaction asked for (`lock`), which SQLite's writer needs none of.
    var locks = Locks()

    /// What a transaction asked to lock, seen once it is over.
    final class Locks {
        /// The cache was written: this process's lookups must open a new snapshot to see it.
        var cache = false
    }

    func rows(_ statement: SQLStatement) throws(OffpeakError) -> [any SQLRow] {
        let (sql, arguments, count) = Self.render(statement)
        do {
            return try Row.fetchAll(db.statement(sql, values: count), arguments: arguments).map {
                SQLiteRow(row: $0)
            }
        } catch {
            throw SQLiteStore.failure(error)
        }
    }

    func execute(_ statement: SQLStatement) throws(OffpeakError) -> Int {
        let (sql, arguments, count) = Self.render(statement)
        do {
            try db.statement(sql, values: count).execute(arguments: arguments)
            return db.changesCount
        } catch {
            throw SQLiteStore.failure(error)
        }
    }

    /// Nothing to lock: SQLite's one writer makes write transactions take turns whole. A write to
    /// the cache is noted, for this process's lookups (`CacheLookups.noteWrite`).
    func lock(_ lock: SQLLock) throws(OffpeakError) {
        if lock == .cache { locks.cache = true }
    }

    /// SQLite compares text byte by byte already (`BINARY`).
    func bytewise(_ text: SQLStatement) -> SQLStatement { text }

    func requests(_ statement: SQLStatement) throws(OffpeakError) -> [RequestRecord] {
        let (sql, arguments, count) = Self.render(statement)
        do {
            return try StoredPayload.expand(
                try RequestRecord.fetchAll(db.statement(sql, values: count), arguments: arguments), db)
        } catch {
            throw SQLiteStore.failure(error)
        }
    }

    /// The statement with `?` placeholders, its values as GRDB binds them, and how many.
    static func render(_ statement: SQLStatement) -> (String, StatementArguments, count: Int) {
        let (sql, values) = statement.rendered { _ in "?" }
        return (sql, StatementArguments(values.map(databaseValue)), values.count)
    }

    static func databaseValue(_ value: SQLValue) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let int): return int.databaseValue
        case .real(let double): return double.databaseValue
        case .text(let text): return text.databaseValue
        case .blob(let data): return data.databaseValue
        case .date(let date): return StoredDateText.string(date).databaseValue
        case .bool(let bool): return bool.databaseValue
        }
    }
}

/// A GRDB row, read without GRDB's traps: a missing column, a NULL or a value of another type is a
/// store error naming the column.
struct SQLiteRow: SQLRow {
    let row: Row

    func isNull(_ column: String) throws(OffpeakError) -> Bool {
        try value(column).isNull
    }

    func string(_ column: String) throws(OffpeakError) -> String { try decode(column) }
    func int(_ column: String) throws(OffpeakError) -> Int { try decode(column) }
    func double(_ column: String) throws(OffpeakError) -> Double { try decode(column) }
    func date(_ column: String) throws(OffpeakError) -> Date { try decode(column) }
    func bool(_ column: String) throws(OffpeakError) -> Bool { try decode(column) }
    func data(_ column: String) throws(OffpeakError) -> Data { try decode(column) }

    private func value(_ column: String) throws(OffpeakError) -> DatabaseValue {
        guard row.hasColumn(column) else {
            throw OffpeakError(.ioError, "the store answered a row without column \(column)")
        }
        return row[column]
    }

    private func decode<Value: DatabaseValueConvertible>(_ column: String) throws(OffpeakError) -> Value {
        let stored = try value(column)
        guard let value = Value.fromDatabaseValue(stored) else {
            throw OffpeakError(
                .ioError, "the store answered a row offpeak cannot read",
                cause: "column \(column) holds \(stored), not a \(Value.self)")
        }
        return value
    }
}
