import Dispatch
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The cache's own read-only connection, for lookups.
///
/// Beginning and ending an SQLite read transaction costs system calls (locks on the database file
/// and on the WAL index) that weigh more than finding and reading the entry. So lookups share one
/// read transaction for up to `snapshotLifetime`: an entry saved or purged by another process may
/// be seen that much later, which for a cache whose entries live for hours is the same as the write
/// landing a moment later. This process always sees its own writes: every write through a
/// `ResponseCache` bumps `writes`, and a lookup that sees the count move begins a fresh snapshot. A
/// timer ends an idle snapshot, so it never holds back WAL checkpoints for long.
///
/// The database is memory-mapped, so a hit reads its pages in place (diskcache does the same), and
/// the one lookup statement, prepared once, is stepped through the SQLite C API on a connection
/// opened with it too, serialized by a lock. GRDB's queue (a Dispatch hop per access) and its
/// statement cache (hashing the SQL text per access) cost as much as the SQLite work itself here;
/// nothing but this one statement and the snapshot's BEGIN and COMMIT ever runs on the connection.
/// (`GRDBSQLite` is GRDB's own module for the system SQLite, the one GRDB documents for raw SQLite
/// calls; errors are GRDB's `DatabaseError`, as the store's own are.)
///
/// Sendable because its one mutable part, `connection`, is only touched holding `lock` (a
/// `Mutex` would not let a lookup hand the caller's closure a row inside it).
final class CacheLookups: @unchecked Sendable {
    /// The lookup: the payload and whether it is fresh at `?2` (a date as the store writes it, see
    /// `StoredDateText`), for key `?3`, found by its row id `?1` (`CacheRowID`). The unary `+` takes
    /// away the column's NUMERIC affinity, which would otherwise make SQLite try to read `?2` as a
    /// number on every lookup; both sides are text and compare byte by byte, as `purge(.expired)`
    /// compares them.
    static let lookupSQL = "SELECT payload, +expires_at > ?2 FROM cache_entries WHERE id = ?1 AND key = ?3"

    /// What a lookup found: the payload in place (valid only inside the callback) and freshness.
    struct Found {
        var payload: UnsafeRawBufferPointer
        var fresh: Bool
    }

    /// How long lookups share one snapshot, in milliseconds.
    static let snapshotMilliseconds = 10
    static let snapshotLifetime = Duration.milliseconds(snapshotMilliseconds)

    /// Writes to the cache made by this process, by any `ResponseCache`.
    private static let writes = Atomic<UInt64>(0)

    /// Records a committed write, so lookups that follow it see it.
    static func noteWrite() {
        writes.add(1, ordering: .sequentiallyConsistent)
    }

    private struct Snapshot {
        var opened: ContinuousClock.Instant
        var writes: UInt64
        var serial: UInt64
    }

    private let lock = NSLock()
    private var connection: Connection
    private let serials = Atomic<UInt64>(0)

    init(url: URL) throws {
        connection = try Connection(path: url.path)
    }

    /// Looks `key` up in the current snapshot (beginning a fresh one when it is too old or this
    /// process has written since) and hands the row to `body`; nil when there is none.
    func find<T>(_ key: String, now: Date, _ body: (Found) -> T) throws -> T? {
        lock.lock()
        defer { lock.unlock() }
        if let serial = try connection.renewIfNeeded(serials: serials) { scheduleEnd(serial) }
        return try connection.find(key, now: now, body)
    }

    /// Ends snapshot `serial`, if it is still open, once its lifetime is over.
    private func scheduleEnd(_ serial: UInt64) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Self.snapshotMilliseconds)) {
            [weak self] in
            self?.end(serial)
        }
    }

    private func end(_ serial: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        connection.end(serial)
    }

    /// The connection, its prepared lookup and its snapshot.
    private struct Connection: ~Copyable {
        let db: OpaquePointer
        let lookup: OpaquePointer
        var snapshot: Snapshot?

        init(path: String) throws {
            var opened: OpaquePointer?
            let status = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
            guard let db = opened else { throw DatabaseError(resultCode: .SQLITE_NOMEM) }
            guard status == SQLITE_OK else {
                defer { sqlite3_close_v2(db) }
                throw Self.error(db, status, sql: nil)
            }
            var statement: OpaquePointer?
            let prepared = sqlite3_exec(
                db, "PRAGMA mmap_size = 268435456; PRAGMA cache_size = -16384", nil, nil, nil)
            let ready =
                prepared == SQLITE_OK
                ? sqlite3_prepare_v3(
                    db, CacheLookups.lookupSQL, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
                : prepared
            guard ready == SQLITE_OK, let statement else {
                defer { sqlite3_close_v2(db) }
                throw Self.error(db, ready, sql: CacheLookups.lookupSQL)
            }
            // As the store's connections wait (GRDB's `busyMode = .timeout(10)`: seconds).
            sqlite3_busy_timeout(db, 10_000)
            self.db = db
            self.lookup = statement
        }

        deinit {
            sqlite3_finalize(lookup)
            // Closing rolls back the open snapshot, if any.
            sqlite3_close_v2(db)
        }

        /// Begins a fresh snapshot when there is none, it is too old, or this process has written
        /// since; returns the new snapshot's serial, so its end can be scheduled.
        mutating func renewIfNeeded(serials: borrowing Atomic<UInt64>) throws -> UInt64? {
            let now = ContinuousClock.now
            let writes = CacheLookups.writes.load(ordering: .sequentiallyConsistent)
            let inside = sqlite3_get_autocommit(db) == 0
            if let snapshot, inside, snapshot.writes == writes,
                now - snapshot.opened < CacheLookups.snapshotLifetime
            {
                return nil
            }
            if inside { try execute("COMMIT") }
            try execute("BEGIN DEFERRED")
            let serial = serials.add(1, ordering: .relaxed).newValue
            snapshot = Snapshot(opened: now, writes: writes, serial: serial)
            return serial
        }

        /// Ends snapshot `serial` if it is still the open one. A failure leaves it to the next renewal.
        mutating func end(_ serial: UInt64) {
            guard snapshot?.serial == serial else { return }
            snapshot = nil
            if sqlite3_get_autocommit(db) == 0 { try? execute("COMMIT") }
        }

        func find<T>(_ key: String, now: Date, _ body: (Found) -> T) throws -> T? {
            let id = CacheRowID.of(key)
            var key = key
            return try key.withUTF8 { key throws -> T? in
                try StoredDateText.withText(now) { now throws -> T? in
                    // Both are bound without a copy, so they are unbound before they go away.
                    defer {
                        sqlite3_reset(lookup)
                        sqlite3_clear_bindings(lookup)
                    }
                    sqlite3_bind_int64(lookup, 1, id)
                    sqlite3_bind_text(lookup, 2, Self.chars(now), Int32(now.count), nil)
                    sqlite3_bind_text(lookup, 3, Self.chars(key), Int32(key.count), nil)
                    switch sqlite3_step(lookup) {
                    case SQLITE_DONE:
                        return nil
                    case SQLITE_ROW:
                        let payload = UnsafeRawBufferPointer(
                            start: sqlite3_column_blob(lookup, 0), count: Int(sqlite3_column_bytes(lookup, 0))
                        )
                        return body(Found(payload: payload, fresh: sqlite3_column_int(lookup, 1) != 0))
                    case let code:
                        throw Self.error(db, code, sql: CacheLookups.lookupSQL)
                    }
                }
            }
        }

        private static func chars(_ text: UnsafeBufferPointer<UInt8>) -> UnsafePointer<CChar>? {
            UnsafeRawPointer(text.baseAddress)?.assumingMemoryBound(to: CChar.self)
        }

        private func execute(_ sql: String) throws {
            let status = sqlite3_exec(db, sql, nil, nil, nil)
            guard status == SQLITE_OK else { throw Self.error(db, status, sql: sql) }
        }

        private static func error(_ db: OpaquePointer, _ code: Int32, sql: String?) -> DatabaseError {
            DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db)), sql: sql
            )
        }
    }
}
