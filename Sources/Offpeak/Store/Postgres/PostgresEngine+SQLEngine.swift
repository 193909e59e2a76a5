import Foundation
import NIOCore
import PostgresNIO

/// The PostgreSQL engine under the rules written once (`SQLEngine`): a read is a repeatable-read
/// snapshot (`snapshot`), a write one transaction; a rule's `lock` locks the run's row or takes an
/// advisory lock, which SQLite's one writer needs neither of.
extension PostgresEngine: SQLEngine {
    func reading<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        try snapshot { () throws(OffpeakError) -> T in try body(PostgresSQLConnection(engine: self)) }
    }

    func writing<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        try store.transaction { () throws(OffpeakError) -> T in
            try body(PostgresSQLConnection(engine: self))
        }
    }

    /// The transaction's commit does not wait for its WAL to reach the disk.
    func writingLightly<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        try store.transaction { () throws(OffpeakError) -> T in
            let connection = PostgresSQLConnection(engine: self)
            try connection.send("SET LOCAL synchronous_commit = off")
            return try body(connection)
        }
    }

    /// One statement needs no snapshot of its own: it sees one already.
    func alone<T>(_ body: (any SQLConnection) throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        try body(PostgresSQLConnection(engine: self))
    }

    /// One statement is a transaction of its own: no `BEGIN` and `COMMIT` around it (one round
    /// trip, not two).
    func execute(_ statement: SQLStatement) throws(OffpeakError) -> Int {
        try PostgresSQLConnection(engine: self).execute(statement)
    }
}

/// Statements on the engine's connection, inside the transaction or snapshot it opened.
struct PostgresSQLConnection: SQLConnection {
    let engine: PostgresEngine

    func rows(_ statement: SQLStatement) throws(OffpeakError) -> [any SQLRow] {
        try engine.store.query(Self.query(statement)).map {
            PostgresSQLRow(columns: PostgresColumns($0, engine.store))
        }
    }

    func execute(_ statement: SQLStatement) throws(OffpeakError) -> Int {
        try engine.store.change(Self.query(statement))
    }

    func send(_ statement: SQLStatement) throws(OffpeakError) {
        try engine.store.send(Self.query(statement))
    }

    func sendReading(_ statement: SQLStatement) throws(OffpeakError) -> SentSQLRows {
        let sent = try engine.store.sendReading(Self.query(statement))
        let store = engine.store
        return SentSQLRows { () throws(OffpeakError) -> [any SQLRow] in
            try sent.get().map { PostgresSQLRow(columns: PostgresColumns($0, store)) }
        }
    }

    func lock(_ lock: SQLLock) throws(OffpeakError) {
        switch lock {
        case .run(let runID): try engine.lockRun(runID)
        case .budgets: try engine.lockBudgets()
        case .job(let job): try engine.lockJob(job)
        case .cache: try engine.lockCache()
        case .sharedTexts:
            // Conflicts with the ROW EXCLUSIVE lock of every `INSERT` into it (`storedPayloads`).
            try engine.store.send("LOCK TABLE shared_texts IN SHARE ROW EXCLUSIVE MODE")
        case .limits(let key):
            try engine.store.send(
                "SELECT pg_advisory_xact_lock(hashtextextended(\("offpeak limits " + key), 0))")
        }
    }

    func bytewise(_ text: SQLStatement) -> SQLStatement { "\(text) COLLATE \"C\"" }

    func requests(_ statement: SQLStatement) throws(OffpeakError) -> [RequestRecord] {
        try engine.requests(try engine.store.query(Self.query(statement)))
    }

    /// The statement with `$1`, `$2`, … placeholders and its values bound as postgres-nio binds them.
    static func query(_ statement: SQLStatement) -> PostgresQuery {
        let (sql, values) = statement.rendered { "$\($0)" }
        var binds = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: binds.appendNull()
            case .integer(let int): binds.append(int)
            case .real(let double): binds.append(double)
            case .text(let text): binds.append(text)
            case .blob(let data): binds.append(ByteBuffer(bytes: data))
            case .date(let date): binds.append(date)
            case .bool(let bool): binds.append(bool)
            }
        }
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }
}

/// A row of the server's answer, its columns decoded by name (`PostgresColumns`).
struct PostgresSQLRow: SQLRow {
    let columns: PostgresColumns

    func isNull(_ column: String) throws(OffpeakError) -> Bool { try columns.isNull(column) }

    func string(_ column: String) throws(OffpeakError) -> String { try columns(column) }
    func int(_ column: String) throws(OffpeakError) -> Int { try columns(column) }
    func double(_ column: String) throws(OffpeakError) -> Double { try columns(column) }
    func date(_ column: String) throws(OffpeakError) -> Date { try columns(column) }
    func bool(_ column: String) throws(OffpeakError) -> Bool { try columns(column) }
    func data(_ column: String) throws(OffpeakError) -> Data {
        Data(try columns(column, as: ByteBuffer.self).readableBytesView)
    }
}

/// The roles written once, above both engines.
extension PostgresEngine: LeaseStore, HostStore, JobSpecStore, LimitStore, ScheduleStore {}
