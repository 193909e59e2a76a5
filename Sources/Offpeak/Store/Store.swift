import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// The workspace's SQLite database (`cache/offpeak.sqlite`, WAL mode, owner-only).
///
/// Everything durable lives here: runs, requests, results, the ledger, checkpoints, leases, the
/// deferred queue and the cache. One `DatabasePool` serves concurrent readers and one writer.
public final class Store: Sendable {
    let pool: DatabasePool
    public let url: URL

    /// Opens (creating if needed) the workspace's store and brings its schema up to date.
    public static func open(_ workspace: Workspace) throws(OffpeakError) -> Store {
        do {
            try FileManager.default.createDirectory(
                at: workspace.cacheDirectory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw OffpeakError(
                .ioError, "cannot create \(workspace.cacheDirectory.path)", cause: "\(error)")
        }
        return try Store(url: workspace.databaseURL)
    }

    public init(url: URL) throws(OffpeakError) {
        self.url = url
        do {
            try Store.createOwnerOnly(url)
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            configuration.foreignKeysEnabled = true
            configuration.label = "offpeak"
            pool = try Store.openPool(url, configuration: configuration)
        } catch let error as OffpeakError {
            throw error
        } catch {
            throw OffpeakError(.ioError, "cannot open the store at \(url.path)", cause: "\(error)")
        }
    }

    /// Opens the pool and brings the schema up to date under an exclusive `flock` on a file beside
    /// the database. Two processes opening a new workspace at the same moment would otherwise both
    /// create the tables (the migrator checks what is applied, then applies the rest in separate
    /// transactions), or one would fail to switch the new file to WAL ("database is locked").
    private static func openPool(_ url: URL, configuration: Configuration) throws -> DatabasePool {
        let lock = try FileLock.exclusive(at: url.path + ".migrate.lock")
        defer { withExtendedLifetime(lock) {} }
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        try StoreMigrations.migrator.migrate(pool)
        return pool
    }

    /// Creates the database file with mode 0600 before SQLite does, so it is never world-readable;
    /// SQLite gives its -wal and -shm files the same mode as the database.
    private static func createOwnerOnly(_ url: URL) throws(OffpeakError) {
        let fd = Glibc.open(url.path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw OffpeakError.system("cannot create", url.path)
        }
        fchmod(fd, 0o600)
        close(fd)
    }

    /// Reads in a snapshot.
    func read<T>(_ body: (Database) throws -> T) throws(OffpeakError) -> T {
        do { return try pool.read(body) } catch { throw Store.failure(error) }
    }

    /// Writes in one transaction: all of `body` lands, or none of it.
    func write<T>(_ body: (Database) throws -> T) throws(OffpeakError) -> T {
        do { return try pool.write(body) } catch { throw Store.failure(error) }
    }

    static func failure(_ error: any Error) -> OffpeakError {
        if let error = error as? OffpeakError { return error }
        return OffpeakError(.ioError, "store error", cause: "\(error)")
    }
}
