import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// How the store file is created, and opened when this process cannot write it.
enum StoreAccess {
    /// What makes the store read-only for this process, and where.
    struct ReadOnly: Sendable {
        var path: String
        var reason: String
    }

    /// Why this process cannot write the workspace's store, or nil when it can. SQLite writes the
    /// database file and creates its -wal and -shm files in the folder, as offpeak does its lock
    /// files; `access(2)` answers for this process's user (root passes file modes, but not a
    /// read-only mount).
    static func readOnly(_ workspace: Workspace) -> ReadOnly? {
        let database = workspace.databaseURL.path
        let folder = workspace.cacheDirectory.path
        let paths: [String]
        if FileManager.default.fileExists(atPath: database) {
            paths = [folder, database]
        } else if FileManager.default.fileExists(atPath: folder) {
            paths = [folder]
        } else {
            paths = [workspace.root.path]
        }
        for path in paths where access(path, W_OK) != 0 {
            guard [EACCES, EROFS, EPERM].contains(errno) else { return nil }  // the open says what else
            return ReadOnly(path: path, reason: String(cString: strerror(errno)))
        }
        return nil
    }

    /// The file's size, or nil when there is no file.
    static func size(of url: URL) throws(OffpeakError) -> Int? {
        var status = stat()
        guard stat(url.path, &status) == 0 else {
            if errno == ENOENT { return nil }
            throw OffpeakError.system("cannot read", url.path)
        }
        return Int(status.st_size)
    }

    /// A store file of 0 bytes: offpeak never leaves one (`create`), so the store that was there
    /// was emptied, and a new one is not started over it without a word.
    static func emptied(_ url: URL) -> OffpeakError {
        let name = url.lastPathComponent
        return OffpeakError(
            .ioError,
            "\(url.path) is empty (0 bytes): the store that was there (runs, queue, cache, ledger) is gone; "
                + "offpeak does not start a new one over it. To start afresh, remove the file "
                + "(and \(name)-wal and \(name)-shm, if there)")
    }

    /// Creates a new store (owner-only, WAL, the whole schema) under another name and renames it into
    /// place: a process killed on the way leaves no empty or half-made store behind. Called under the
    /// migration lock, so no other process opens `url` meanwhile.
    static func create(_ url: URL, configuration: Configuration) throws(OffpeakError) {
        let staging = url.path + ".new"
        for suffix in ["", "-wal", "-shm"] { unlink(staging + suffix) }  // left by a killed creator
        let fd = Glibc.open(staging, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw OffpeakError.system("cannot create", staging) }
        // SQLite gives its -wal and -shm files the database's mode: never world-readable.
        fchmod(fd, 0o600)
        close(fd)
        do {
            // Pages freed by retention go back to the file system (`SQLiteStore.reclaimSpace`):
            // set before the first table, as SQLite allows only then (or with a whole VACUUM).
            var configuration = configuration
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL") }
            let pool = try DatabasePool(path: staging, configuration: configuration)
            try StoreMigrations.migrator.migrate(pool)
            _ = try pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
            try pool.close()
        } catch {
            throw OffpeakError(.ioError, "cannot create the store at \(url.path)", cause: "\(error)")
        }
        // A log left by a removed store must not be replayed into the new one.
        for suffix in ["-wal", "-shm"] { unlink(url.path + suffix) }
        guard rename(staging, url.path) == 0 else { throw OffpeakError.system("cannot create", url.path) }
    }

    /// Opens the store read-only. With its -shm file there (a writer has it open, or left its index),
    /// SQLite reads through the log and index as usual, beside a writer too. Without it, SQLite
    /// cannot read a WAL database from a folder it cannot write, unless told the file is immutable:
    /// that is only right when there is no log to read, so then it is, and a log without an index
    /// is an error that says so. The schema must be current: a read-only store cannot be migrated, and
    /// one a newer offpeak migrated is refused.
    static func openReadOnly(_ url: URL, because readOnly: ReadOnly, configuration: Configuration)
        throws(OffpeakError) -> DatabasePool
    {
        let path = url.path
        guard let size = try size(of: url) else {
            throw OffpeakError(
                .ioError,
                "no store at \(path): nothing has run in this workspace, and \(readOnly.path) "
                    + "is read-only (\(readOnly.reason))")
        }
        if size == 0 { throw emptied(url) }
        guard access(path, R_OK) == 0 else { throw OffpeakError.system("cannot read", path) }
        var location = path
        if !FileManager.default.fileExists(atPath: path + "-shm") {
            guard (try self.size(of: URL(fileURLWithPath: path + "-wal")) ?? 0) == 0 else {
                throw OffpeakError(
                    .ioError,
                    "cannot read \(path): \(readOnly.path) is read-only (\(readOnly.reason)), and the "
                        + "store's write-ahead log (\(path)-wal) has no index beside it to read it by; "
                        + "the next command that writes (run by the store's owner) folds the log in")
            }
            let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
            location = "file:\(encoded)?mode=ro&immutable=1"
        }
        let pool: DatabasePool
        let current: Bool
        let newer: OffpeakError?
        do {
            pool = try DatabasePool(path: location, configuration: configuration)
            (current, newer) = try pool.read { db in
                (
                    try StoreMigrations.migrator.hasCompletedMigrations(db),
                    try StoreMigrations.newer(db, path: path)
                )
            }
        } catch {
            throw OffpeakError(
                .ioError, "cannot read the store at \(path) (read-only: \(readOnly.reason))",
                cause: "\(error)")
        }
        if let newer { throw newer }
        guard current else {
            throw OffpeakError(
                .ioError,
                "the store at \(path) was made by an older offpeak and must be upgraded by a command that "
                    + "writes, but \(readOnly.path) is read-only: \(readOnly.reason)")
        }
        return pool
    }
}
