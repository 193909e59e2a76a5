import Foundation
import GRDB
import Synchronization

/// The SQLite store as either end of a copy (`StoreCopy`): reads in one snapshot, writes in one
/// transaction, on the connection `body` runs with.
final class SQLiteCopyEnd: StoreCopySource, StoreCopyTarget, @unchecked Sendable {
    let store: SQLiteStore
    /// The connection of the snapshot or the transaction in progress.
    private var db: Database?

    init(_ store: SQLiteStore) {
        self.store = store
    }

    var copyDescription: String { "the SQLite store at \(store.url.path)" }

    /// The columns a copy carries: not the cache table's row id, which is this engine's layout and
    /// is made from the key again on the way in (`copyInsert`).
    func copyColumnNames(table: String) throws(OffpeakError) -> [String] {
        let read = { (db: Database) throws -> [String] in
            try db.columns(in: table).map(\.name).filter { !(table == "cache_entries" && $0 == "id") }
        }
        if let db { return try Self.attempt { try read(db) } }
        return try store.read(read)
    }

    /// An immediate write transaction: its snapshot is the copy's, and every other writer waits
    /// for it (`busyMode`, then SQLITE_BUSY: `SQLiteStore.failure`).
    func copySnapshot<T>(_ body: () throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        do {
            return try store.pool.writeWithoutTransaction { db in
                var value: T?
                try db.inTransaction(.immediate) {
                    value = try self.with(db, body)
                    return .commit
                }
                guard let value else {
                    throw OffpeakError(.software, "the copy's transaction returned nothing")
                }
                return value
            }
        } catch { throw SQLiteStore.failure(error) }
    }

    func copyMarkMoved(_ sentence: String) throws(OffpeakError) {
        let db = try connection()
        try Self.attempt {
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(StoreMove.table) (sentence TEXT NOT NULL)")
            try db.execute(sql: "DELETE FROM \(StoreMove.table)")
            try db.execute(sql: "INSERT INTO \(StoreMove.table) (sentence) VALUES (?)", arguments: [sentence])
            for table in StoreMove.guardedTables {
                for operation in ["INSERT", "UPDATE", "DELETE"] {
                    let name = "\(StoreMove.table)_\(table)_\(operation.lowercased())"
                    try db.execute(sql: "DROP TRIGGER IF EXISTS \(name)")
                    try db.execute(
                        sql: """
                            CREATE TRIGGER \(name) BEFORE \(operation) ON \(table)
                            BEGIN SELECT RAISE(ABORT, \(StoreMove.literal(sentence))); END
                            """)
                }
            }
        }
    }

    func copyWriting<T>(_ body: () throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        try store.write { db in try self.with(db, body) }
    }

    private func with<T>(_ db: Database, _ body: () throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        self.db = db
        defer { self.db = nil }
        return try body()
    }

    func copyRows(of table: CopyTable, chunk: Int, _ body: ([[CopyValue]]) throws(OffpeakError) -> Void)
        throws(OffpeakError)
    {
        let db = try connection()
        let columns = table.columns.map { "\"\($0.name)\"" }.joined(separator: ", ")
        var rows: [[CopyValue]] = []
        try Self.attempt {
            let cursor = try Row.fetchCursor(
                db, sql: "SELECT \(columns) FROM \"\(table.name)\" ORDER BY rowid")
            while let row = try cursor.next() {
                rows.append(
                    (0..<table.columns.count).map { index -> CopyValue in
                        switch (row[index] as DatabaseValue).storage {
                        case .null: .null
                        case .int64(let value): .integer(value)
                        case .double(let value): .real(value)
                        case .string(let value): .text(value)
                        case .blob(let value): .bytes([UInt8](value))
                        }
                    })
                if rows.count == chunk {
                    try body(rows)
                    rows.removeAll(keepingCapacity: true)
                }
            }
        }
        if !rows.isEmpty { try body(rows) }
    }

    func copyHeldTable(of tables: [String]) throws(OffpeakError) -> String? {
        try store.read { db in
            try tables.first { table in
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \"\(table)\")") == true
            }
        }
    }

    func copyClear(table: String) throws(OffpeakError) {
        let db = try connection()
        try Self.attempt { try db.execute(sql: "DELETE FROM \"\(table)\"") }
    }

    func copyInsert(_ rows: [[CopyValue]], into table: CopyTable) throws(OffpeakError) {
        let db = try connection()
        // A cache entry's row id, made from its key (`CacheRowID`), goes first.
        let keyed = table.name == "cache_entries" ? table.columns.firstIndex { $0.name == "key" } : nil
        let names = ((keyed == nil ? [] : ["id"]) + table.columns.map(\.name)).map { "\"\($0)\"" }
        let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
        try Self.attempt {
            let statement = try db.cachedStatement(
                sql: "INSERT INTO \"\(table.name)\" (\(names.joined(separator: ", "))) VALUES (\(marks))")
            for row in rows {
                var values: [DatabaseValue] = []
                values.reserveCapacity(names.count)
                if let keyed, case .text(let key) = row[keyed] {
                    values.append(CacheRowID.of(key).databaseValue)
                }
                for (value, column) in zip(row, table.columns) {
                    values.append(try Self.databaseValue(value, column, table: table.name))
                }
                try statement.execute(arguments: StatementArguments(values))
            }
        }
    }

    /// SQLite numbers `AUTOINCREMENT` ids after the largest written, copied ones included.
    func copyFinish(_ schema: [CopyTable]) throws(OffpeakError) {}

    /// `value` as the SQLite store keeps `column`: booleans 0 or 1, times as text.
    static func databaseValue(_ value: CopyValue, _ column: CopyColumn, table: String) throws -> DatabaseValue
    {
        switch (value, column.kind) {
        case (.null, _): return .null
        case (.text(let text), .text), (.text(let text), .time): return text.databaseValue
        case (.integer(let number), .integer), (.integer(let number), .boolean): return number.databaseValue
        case (.real(let number), .real): return number.databaseValue
        case (.integer(let number), .real): return Double(number).databaseValue
        case (.bytes(let bytes), .bytes): return Data(bytes).databaseValue
        default:
            throw OffpeakError(
                .dataError,
                "cannot copy \(table).\(column.name): a \(value.kindName) where \(column.kind) was expected")
        }
    }

    private func connection() throws(OffpeakError) -> Database {
        guard let db else {
            throw OffpeakError(
                .software, "the SQLite store was used for a copy outside its snapshot or transaction")
        }
        return db
    }

    static func attempt<T>(_ body: () throws -> T) throws(OffpeakError) -> T {
        do { return try body() } catch { throw SQLiteStore.failure(error) }
    }
}

extension CopyValue {
    /// What the value is, for messages.
    var kindName: String {
        switch self {
        case .null: "null"
        case .text: "text"
        case .integer: "integer"
        case .real: "real number"
        case .bytes: "byte string"
        }
    }
}

extension SQLiteStore {
    /// Folds the WAL into the file (truncating it) and closes every connection, so the file alone
    /// holds the store; the store is unusable afterwards.
    func close() throws(OffpeakError) {
        do {
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try pool.close()
        } catch { throw SQLiteStore.failure(error) }
    }
}

extension SQLiteStore {
    /// The sentence a moved store refuses writes with (`StoreMove`), nil for one not moved.
    func movedSentence() throws(OffpeakError) -> String? {
        try read { db in
            guard
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)",
                    arguments: [StoreMove.table]) == true
            else { return nil }
            return try String.fetchOne(db, sql: "SELECT sentence FROM \(StoreMove.table)")
        }
    }
}
