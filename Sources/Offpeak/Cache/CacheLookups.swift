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
/// the one lookup statement is stepped through the SQLite C API: GRDB's general fetching machinery
/// costs as much as the SQLite work itself here. (`GRDBSQLite` is GRDB's own module for the system
/// SQLite, the one GRDB documents for raw SQLite calls.)
final class CacheLookups: Sendable {
    /// The lookup: the payload and whether it is fresh at `?2` (a Julian day), for key `?1`.
    static let lookupSQL =
        "SELECT payload, julianday(expires_at) > ?2 FROM cache_entries WHERE key = ?1"

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

    private let queue: DatabaseQueue
    /// The open snapshot; only read and written on `queue`, the lock is for the compiler's sake.
    private let snapshot = Mutex<Snapshot?>(nil)
    private let serials = Atomic<UInt64>(0)

    init(url: URL) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        configuration.label = "offpeak.cache-lookups"
        // The shared snapshot is a transaction left open between accesses, on purpose.
        configuration.allowsUnsafeTransactions = true
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA mmap_size = 268435456")
            try db.execute(sql: "PRAGMA cache_size = -16384")
        }
        queue = try DatabaseQueue(path: url.path, configuration: configuration)
    }

    deinit {
        try? queue.inDatabase { db in
            if db.isInsideTransaction { try db.rollback() }
        }
    }

    /// Looks `key` up in the current snapshot (beginning a fresh one when it is too old or this
    /// process has written since) and hands the row to `body`; nil when there is none.
    func find<T>(_ key: String, now julianDay: Double, _ body: (Found) -> T) throws -> T? {
        try queue.inDatabase { db in
            try renewIfNeeded(db)
            let statement = try db.cachedStatement(sql: Self.lookupSQL).sqliteStatement
            return try key.withCString { text throws -> T? in
                // The key is bound without a copy, so it is unbound before `text` goes away.
                sqlite3_reset(statement)
                defer {
                    sqlite3_reset(statement)
                    sqlite3_clear_bindings(statement)
                }
                sqlite3_bind_text(statement, 1, text, -1, nil)
                sqlite3_bind_double(statement, 2, julianDay)
                switch sqlite3_step(statement) {
                case SQLITE_DONE:
                    return nil
                case SQLITE_ROW:
                    let payload = UnsafeRawBufferPointer(
                        start: sqlite3_column_blob(statement, 0),
                        count: Int(sqlite3_column_bytes(statement, 0)))
                    return body(Found(payload: payload, fresh: sqlite3_column_int(statement, 1) != 0))
                case let code:
                    throw DatabaseError(
                        resultCode: ResultCode(rawValue: code),
                        message: String(cString: sqlite3_errstr(code)),
                        sql: Self.lookupSQL)
                }
            }
        }
    }

    private func renewIfNeeded(_ db: Database) throws {
        let now = ContinuousClock.now
        let writes = Self.writes.load(ordering: .sequentiallyConsistent)
        let current = snapshot.withLock { $0 }
        if let current, db.isInsideTransaction, current.writes == writes,
            now - current.opened < Self.snapshotLifetime
        {
            return
        }
        if db.isInsideTransaction { try db.commit() }
        try db.beginTransaction(.deferred)
        let serial = serials.add(1, ordering: .relaxed).newValue
        snapshot.withLock { $0 = Snapshot(opened: now, writes: writes, serial: serial) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Self.snapshotMilliseconds)) {
            [weak self] in
            self?.end(serial)
        }
    }

    /// Ends snapshot `serial` if it is still open.
    private func end(_ serial: UInt64) {
        try? queue.inDatabase { db in
            guard snapshot.withLock({ $0?.serial == serial }) else { return }
            snapshot.withLock { $0 = nil }
            if db.isInsideTransaction { try db.commit() }
        }
    }
}
