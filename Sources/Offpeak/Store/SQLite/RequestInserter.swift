import Foundation
import GRDB
import GRDBSQLite

/// Inserts requests (submitted ones a chunk at a time, a run's from its spec) through one prepared
/// statement.
///
/// `offpeak submit` writes thousands of rows a second. GRDB's `Codable` insert encodes each row
/// through a keyed container and converts every property's name to its snake_case column; its
/// `execute(arguments:)` boxes each value; and a date is formatted (through ICU) each time it is
/// written. Here each row binds its values through the SQLite C API in the statement's column
/// order, a date is formatted once for the rows that share it (a chunk's rows do), the payload is
/// stored with its system prompt by reference (`StoredPayload`), and `ON CONFLICT (run_id,
/// item_id) DO NOTHING` tells whether the run already had the item, without a query of its own.
struct RequestInserter {
    static let insertSQL = """
        INSERT INTO requests (id, run_id, job, item_id, position, source, client_id, tier, payload, cache_key,
            state, attempts, next_attempt_at, error, created_at, updated_at, cache_policy, sources, tags)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (run_id, item_id) DO NOTHING
        """

    private let db: Database
    private let statement: SQLiteStatement
    private var payloads: StoredPayload.Writer
    /// The last date written and its text.
    private var lastDate: (date: Date, text: String)?

    init(_ db: Database) throws {
        self.db = db
        statement = try db.cachedStatement(sql: Self.insertSQL).sqliteStatement
        payloads = StoredPayload.Writer(db)
    }

    /// Inserts `record` unless its run already has its item.
    /// - Returns: whether the row was added (false: the run already holds the item).
    /// - Throws: as `StoredRecord.willSave` does for a date the store could not read back.
    mutating func insert(_ record: RequestRecord) throws -> Bool {
        if !(StoredDate.isStorable(record.createdAt) && StoredDate.isStorable(record.updatedAt)
            && record.nextAttemptAt.map(StoredDate.isStorable) != false)
        {
            try StoredDate.check(record)
        }
        sqlite3_reset(statement)
        defer { sqlite3_clear_bindings(statement) }
        bind(1, record.id)
        bind(2, record.runId)
        bind(3, record.job)
        bind(4, record.itemId)
        sqlite3_bind_int64(statement, 5, Int64(record.position))
        bind(6, record.source.rawValue)
        bind(7, record.clientId)
        bind(8, record.tier)
        bind(9, try payloads.stored(record.payload))
        bind(10, record.cacheKey)
        bind(11, record.state.rawValue)
        sqlite3_bind_int64(statement, 12, Int64(record.attempts))
        if let next = record.nextAttemptAt {
            bind(13, text(of: next))
        } else {
            sqlite3_bind_null(statement, 13)
        }
        bind(14, record.error)
        bind(15, text(of: record.createdAt))
        bind(16, text(of: record.updatedAt))
        bind(17, record.cachePolicy.rawValue)
        bind(18, record.sources)
        bind(19, record.tags)
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code),
                message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: Self.insertSQL)
        }
        return sqlite3_changes(db.sqliteConnection) > 0
    }

    /// Inserts `record`, which its run must not have yet (a run's new requests, a spec's new items).
    /// - Throws: a software error when the run already has its item, as a plain insert would fail.
    mutating func insertNew(_ record: RequestRecord) throws {
        guard try insert(record) else {
            throw OffpeakError(
                .software, "run \(record.runId) already has a request for item \(record.itemId)")
        }
    }

    /// A date as GRDB writes it (so it reads back as any other), formatted once while it repeats.
    private mutating func text(of date: Date) -> String {
        if let lastDate, lastDate.date == date { return lastDate.text }
        let text = StoredDateText.string(date)
        lastDate = (date, text)
        return text
    }

    /// Binds `value` as text (SQLite copies it), or NULL.
    private func bind(_ index: Int32, _ value: String?) {
        guard var value else {
            sqlite3_bind_null(statement, index)
            return
        }
        value.withUTF8 { bytes in
            // An empty buffer may have no address, and a NULL pointer would bind NULL, not "".
            let empty: StaticString = ""
            sqlite3_bind_text(
                statement, index,
                UnsafeRawPointer(bytes.baseAddress ?? empty.utf8Start)
                    .assumingMemoryBound(to: CChar.self), Int32(bytes.count), Self.transient)
        }
    }

    /// SQLite's SQLITE_TRANSIENT: copy the bound text before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
