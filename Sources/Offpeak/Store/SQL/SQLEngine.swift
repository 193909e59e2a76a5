import Foundation

/// What an engine gives the store's rules that are written once above it (`LeaseStore+SQL`, …):
/// statements (`SQLStatement`) in a read snapshot or in one write transaction. What truly differs
/// between the engines stays with them: the dialect's placeholders, how values are kept, how a
/// transaction is opened and what it locks (`SQLConnection.lock`), the connection.
protocol SQLEngine: AnyObject, Sendable {
    /// Runs `body`'s statements in one snapshot: they see the store as it was at the first of them.
    func reading<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T

    /// Runs `body`'s statements in one transaction: all of it lands, or none of it.
    func writing<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T

    /// `writing`, for what must outlive a kill of this process but not a power cut (which ends what
    /// it records with it): SQLite commits it without its own `fsync` (the next durable commit
    /// syncs it), PostgreSQL without waiting for its WAL to be flushed (`synchronous_commit = off`).
    func writingLightly<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T

    /// Runs `body`, which makes one statement: alone, a statement sees one snapshot already, so
    /// PostgreSQL needs no transaction around it (one round trip, not three).
    func alone<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T

    /// One statement on its own, outside any transaction the caller holds.
    func rows(_ statement: SQLStatement) throws(OffpeakError) -> [any SQLRow]

    /// One statement that writes, in a transaction of its own.
    /// - Returns: how many rows it inserted, updated or deleted.
    @discardableResult
    func execute(_ statement: SQLStatement) throws(OffpeakError) -> Int
}

extension SQLEngine {
    func alone<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        try reading(body)
    }

    func rows(_ statement: SQLStatement) throws(OffpeakError) -> [any SQLRow] {
        try alone { connection throws(OffpeakError) in try connection.rows(statement) }
    }

    @discardableResult
    func execute(_ statement: SQLStatement) throws(OffpeakError) -> Int {
        try writing { connection throws(OffpeakError) in try connection.execute(statement) }
    }
}

/// Statements inside an engine's transaction or snapshot (`SQLEngine`).
protocol SQLConnection {
    /// The statement's rows.
    func rows(_ statement: SQLStatement) throws(OffpeakError) -> [any SQLRow]

    /// Runs a statement whose rows nobody reads.
    /// - Returns: how many rows it inserted, updated or deleted.
    @discardableResult
    func execute(_ statement: SQLStatement) throws(OffpeakError) -> Int

    /// Sends a statement whose rows nobody reads, and goes on: PostgreSQL hands it to the server
    /// with the transaction's next round trip (a failure is thrown there, or by `COMMIT`); SQLite
    /// runs it at once. For what nothing in the transaction reads back before its end.
    func send(_ statement: SQLStatement) throws(OffpeakError)

    /// Sends a statement whose rows are read once the transaction has ended (`SentSQLRows`): on
    /// PostgreSQL they come with its `COMMIT`, no round trip of their own.
    func sendReading(_ statement: SQLStatement) throws(OffpeakError) -> SentSQLRows

    /// Holds `lock` until the transaction ends, so the decisions it guards take turns across
    /// processes and hosts. PostgreSQL locks the run's row (`FOR UPDATE`) or takes a transaction
    /// advisory lock; SQLite has nothing to do, its one writer already makes every write
    /// transaction take its turn whole.
    func lock(_ lock: SQLLock) throws(OffpeakError)

    /// `text` compared byte by byte: as SQLite compares text unless told otherwise, and PostgreSQL
    /// only in the "C" collation. The order both engines sort keys in, so they evict and list alike.
    func bytewise(_ text: SQLStatement) -> SQLStatement

    /// The requests a statement selecting `RequestRecord.columns` returns, their payloads made whole:
    /// each engine keeps shared texts (`shared_texts`) and decodes request rows its own way.
    func requests(_ statement: SQLStatement) throws(OffpeakError) -> [RequestRecord]
}

extension SQLConnection {
    func send(_ statement: SQLStatement) throws(OffpeakError) { try execute(statement) }

    func sendReading(_ statement: SQLStatement) throws(OffpeakError) -> SentSQLRows {
        let rows = try rows(statement)
        return SentSQLRows { rows }
    }
}

/// The rows of a statement sent ahead (`SQLConnection.sendReading`), read once the transaction it
/// was sent in has ended; a failure of the transaction is thrown by `get`.
struct SentSQLRows {
    private let read: () throws(OffpeakError) -> [any SQLRow]

    init(_ read: @escaping () throws(OffpeakError) -> [any SQLRow]) { self.read = read }

    func get() throws(OffpeakError) -> [any SQLRow] { try read() }
}

/// What a write transaction holds so that its decision and another's take turns (`SQLConnection.lock`).
enum SQLLock: Sendable, Equatable {
    /// The run's row: commits, claims, merges and cancels of one run.
    case run(String)
    /// Every budget: a reservation's check and its insert.
    case budgets
    /// The job: whether it has an open run, and what its spool folder holds that intake does not take.
    case job(String)
    /// A provider's shared limits (`SharedLimits.key`): asks on one provider take turns across
    /// processes and hosts, asks on different providers do not wait for each other.
    case limits(String)
    /// The answer cache: saves, evictions and purges take turns (and, on SQLite, this process's
    /// cache lookups see the write once it is committed).
    case cache
    /// The stored system prompts (`shared_texts`): one no request names is removed only while no
    /// transaction that writes requests naming one is open (each of those writes the table too).
    case sharedTexts
}

/// One row of a statement's answer, its columns read by name. A value that is not of the type
/// asked for is a store error naming the column, never a crash.
protocol SQLRow {
    func isNull(_ column: String) throws(OffpeakError) -> Bool
    func string(_ column: String) throws(OffpeakError) -> String
    func int(_ column: String) throws(OffpeakError) -> Int
    func double(_ column: String) throws(OffpeakError) -> Double
    func date(_ column: String) throws(OffpeakError) -> Date
    func bool(_ column: String) throws(OffpeakError) -> Bool
    func data(_ column: String) throws(OffpeakError) -> Data
}

extension SQLRow {
    /// The column's value as `Value`: `row("owner")`, `row("expires_at", as: Date?.self)`.
    func callAsFunction<Value: SQLColumn>(_ column: String, as type: Value.Type = Value.self)
        throws(OffpeakError) -> Value
    {
        try Value.read(column, from: self)
    }

    /// A text column holding a Swift enum's raw value.
    func value<Value: RawRepresentable>(_ column: String, as type: Value.Type) throws(OffpeakError) -> Value
    where Value.RawValue == String {
        let text = try string(column)
        guard let value = Value(rawValue: text) else {
            throw OffpeakError(.dataError, "the store's column \(column) holds an unknown value \"\(text)\"")
        }
        return value
    }
}

/// A Swift type a column is read as.
protocol SQLColumn {
    static func read(_ column: String, from row: some SQLRow) throws(OffpeakError) -> Self
}

extension String: SQLColumn {
    static func read(_ column: String, from row: some SQLRow) throws(OffpeakError) -> String {
        try row.string(column)
    }
}

extension Int: SQLColumn {
    static func read(_ column: String, from row: some SQLRow) throws(OffpeakError) -> Int {
        try row.int(column)
    }
}

extension Double: SQLColumn {
    static func read(_ column: String, from row: some SQLRow) throws(OffpeakError) -> Double {
        try row.double(column)
    }
}

extension Date: SQLColumn {
    static func read(_ column: String, from row: some SQLRow) throws(OffpeakError) -> Date {
        try row.date(column)
    }
}

extension Bool: SQLColumn {
    static func read(_ column: String, from row: some SQLRow) throws(OffpeakError) -> Bool {
        try row.bool(column)
    }
}

extension Data: SQLColumn {
    static func read(_ column: String, from row: some SQLRow) throws(OffpeakError) -> Data {
        try row.data(column)
    }
}

extension Optional: SQLColumn where Wrapped: SQLColumn {
    static func read(_ column: String, from row: some SQLRow) throws(OffpeakError) -> Wrapped? {
        try row.isNull(column) ? nil : try Wrapped.read(column, from: row)
    }
}
