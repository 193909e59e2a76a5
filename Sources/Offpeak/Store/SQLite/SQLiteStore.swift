import Foundation
import GRDB
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The workspace's SQLite database (`cache/offpeak.sqlite`, WAL mode, owner-only).
///
/// Everything durable lives here: runs, requests, results, the ledger, checkpoints, leases, the
/// deferred queue and the cache. One `DatabasePool` serves concurrent readers and one writer.
final class SQLiteStore: RunStore, LedgerStore, BatchStore, ScheduleStore, SubmissionStore, LeaseStore {
    let pool: DatabasePool
    let url: URL
    /// Opened by `openForReading` on a store this process cannot write: every write fails.
    let isReadOnly: Bool
    /// The answer cache's own lookup connection (`lookups`), opened at the first lookup.
    let lookupConnection = Mutex(LookupConnection.unopened)

    /// Opens (creating if needed) the workspace's store and brings its schema up to date, for a
    /// command that writes. A store this process cannot write is refused here, saying so, rather
    /// than failing at some later write.
    static func open(_ workspace: Workspace) throws(OffpeakError) -> SQLiteStore {
        try requireWritable(workspace)
        do {
            try FileManager.default.createDirectory(
                at: workspace.cacheDirectory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw OffpeakError(
                .ioError, "cannot create \(workspace.cacheDirectory.path)", cause: "\(error)")
        }
        return try SQLiteStore(url: workspace.databaseURL)
    }

    /// Refuses, saying why, a workspace whose store this process cannot write.
    static func requireWritable(_ workspace: Workspace) throws(OffpeakError) {
        guard let readOnly = StoreAccess.readOnly(workspace) else { return }
        throw OffpeakError(
            .ioError,
            "\(readOnly.path) is read-only: \(readOnly.reason); this command writes to the store "
                + "(status, batches, queue, costs, cache stats and result only read it, and work)")
    }

    /// For commands that only report: the store as `open` gives it when this process can write it,
    /// else opened read-only (someone else's workspace, a read-only mount) without creating,
    /// migrating or writing anything.
    static func openForReading(_ workspace: Workspace) throws(OffpeakError) -> SQLiteStore {
        guard let readOnly = StoreAccess.readOnly(workspace) else { return try open(workspace) }
        return try SQLiteStore(readOnlyAt: workspace.databaseURL, because: readOnly)
    }

    init(url: URL) throws(OffpeakError) {
        self.url = url
        isReadOnly = false
        pool = try SQLiteStore.openPool(url, configuration: SQLiteStore.configuration(readOnly: false))
    }

    /// A store whose every connection runs `prepare` when it opens (tests trace statements with it).
    init(url: URL, prepare: @escaping @Sendable (Database) throws -> Void) throws(OffpeakError) {
        self.url = url
        isReadOnly = false
        var configuration = SQLiteStore.configuration(readOnly: false)
        configuration.prepareDatabase(prepare)
        pool = try SQLiteStore.openPool(url, configuration: configuration)
    }

    init(readOnlyAt url: URL, because readOnly: StoreAccess.ReadOnly) throws(OffpeakError) {
        self.url = url
        isReadOnly = true
        pool = try StoreAccess.openReadOnly(
            url, because: readOnly, configuration: SQLiteStore.configuration(readOnly: true))
    }

    static func configuration(readOnly: Bool) -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        configuration.label = "offpeak"
        configuration.readonly = readOnly
        return configuration
    }

    /// Opens the pool and brings the schema up to date under an exclusive `flock` on a file beside
    /// the database. Two processes opening a new workspace at the same moment would otherwise both
    /// create the tables (the migrator checks what is applied, then applies the rest in separate
    /// transactions), or one would fail to switch the new file to WAL ("database is locked").
    /// A store a newer offpeak has migrated is refused before anything is written to it.
    /// Whether the store is new is decided under the lock too: a missing file is created (see
    /// `StoreAccess.create`), and an empty one, which offpeak never leaves, is refused.
    private static func openPool(_ url: URL, configuration: Configuration) throws(OffpeakError)
        -> DatabasePool
    {
        let lock = try FileLock.exclusive(at: url.path + ".migrate.lock")
        defer { withExtendedLifetime(lock) {} }
        switch try StoreAccess.size(of: url) {
        case nil: try StoreAccess.create(url, configuration: configuration)
        case 0?: throw StoreAccess.emptied(url)
        default: break
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: url.path, configuration: configuration)
            // Checked before anything is written (the migrator's table included), on the writer: a
            // reader that read the schema before the migrations would prepare its first `SELECT *`
            // of a table they added a column to with the old columns, and miss the new one.
            if let newer = try pool.writeWithoutTransaction({ db in
                try StoreMigrations.newer(db, path: url.path)
            }) {
                throw newer
            }
            if !configuration.readonly { try prepareWriter(pool) }
            try StoreMigrations.migrator.migrate(pool)
            return pool
        } catch let error as OffpeakError {
            throw error
        } catch {
            throw OffpeakError(.ioError, "cannot open the store at \(url.path)", cause: "\(error)")
        }
    }

    /// Makes every commit durable before it returns: `synchronous = FULL` on the one writer
    /// connection (GRDB leaves WAL pools at `NORMAL`, which survives `kill -9` but may lose the last
    /// commits to a power cut). A commit records answers already paid for, so it must outlive the
    /// machine, not only the process; the price is one `fsync` of the WAL per write transaction
    /// ("What a stop can lose" in docs/conditions-queue-tick.md gives the measured cost per call).
    ///
    /// The writer's statement journals stay in memory (`temp_store = MEMORY`): each insert of a
    /// request (its trigger keeps the run's counters) journals the pages it changes in case it must
    /// be undone alone, and once one statement's journal passed 64 KiB SQLite kept it in a file
    /// under /var/tmp for good, two `pwrite`s per page per statement: a quarter of `submit`'s time.
    private static func prepareWriter(_ pool: DatabasePool) throws {
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY")
        }
    }

    /// Reads in a snapshot.
    func read<T>(_ body: (Database) throws -> T) throws(OffpeakError) -> T {
        do { return try pool.read(body) } catch { throw SQLiteStore.failure(error) }
    }

    /// Writes in one transaction: all of `body` lands, or none of it.
    func write<T>(_ body: (Database) throws -> T) throws(OffpeakError) -> T {
        do { return try pool.write(body) } catch { throw SQLiteStore.failure(error) }
    }

    static func failure(_ error: any Error) -> OffpeakError {
        if let error = error as? OffpeakError { return error }
        if let error = error as? DatabaseError {
            // A trigger of a store `offpeak store copy` moved (`StoreMove`).
            if let message = error.message, message.hasPrefix(StoreMove.prefix) {
                return StoreMove.error(message)
            }
            if error.resultCode == .SQLITE_BUSY {
                return OffpeakError(
                    .temporaryFailure,
                    "the store stayed locked by another process for 10 s (`offpeak store copy` holds it "
                        + "for as long as it copies); nothing was written: try again once it ends",
                    cause: "\(error)")
            }
        }
        return OffpeakError(.ioError, "store error", cause: "\(error)")
    }
}
