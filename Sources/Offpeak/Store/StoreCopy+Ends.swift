import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

extension StoreCopy {
    /// Copies the store at `from` into `to` (the other engine, or another PostgreSQL database).
    /// The workspace's SQLite file is read or written when either end is `sqlite`.
    ///
    /// The source is read under its tick lock (`TickLock`), so no tick writes it meanwhile: a SQLite
    /// store's is the workspace's `cache/tick.lock`; a PostgreSQL store's is taken exclusively on
    /// the connection that reads it, and every host's tick is refused until the copy ends.
    ///
    /// A SQLite target is written to a new file beside the workspace's and renamed into place once
    /// whole; one already there is refused, since it may hold work the source does not. A
    /// PostgreSQL target must hold none of offpeak's rows; it is written in one transaction.
    /// - Throws: `.temporaryFailure` while a tick holds the source's tick lock.
    static func copy(
        from: StoreLocation, to: StoreLocation, workspace: Workspace, environment: [String: String],
        logger: Logger
    ) throws(OffpeakError) -> StoreCopyOutcome {
        if from == to {
            throw OffpeakError(.usage, "the workspace's store is already \(to); nothing to copy")
        }
        let sqliteFile = workspace.databaseURL
        switch (from, to) {
        case (.sqlite, .postgres(let url)):
            let lock: WorkspaceLock
            switch try WorkspaceLock.acquire(workspace) {
            case .acquired(let held): lock = held
            case .held(let pid):
                throw OffpeakError(
                    .temporaryFailure,
                    "a tick is running in this workspace (pid \(pid.map(String.init) ?? "unknown")); copy once it ends"
                )
            }
            defer { withExtendedLifetime(lock) {} }
            let source = try SQLiteCopyEnd(openSource(sqliteFile))
            return try intoPostgres(
                url, from: source, described: source.copyDescription, setting: to, environment: environment,
                logger: logger)
        case (.postgres(let url), .sqlite):
            try refuseExisting(sqliteFile)
            let source = try connect(url, environment: environment, logger: logger)
            defer { source.close() }
            let lock = try source.lockForCopy()
            defer { lock.release() }
            let report = try intoNewFile(sqliteFile) { (store, place) throws(OffpeakError) -> Report in
                try copy(
                    from: source, to: SQLiteCopyEnd(store), schema: schema(source.copyColumns),
                    moved: StoreMove.sentence(to: to.description, at: Date()), placed: place)
            }
            return StoreCopyOutcome(
                from: source.copyDescription, to: "the SQLite store at \(sqliteFile.path)",
                setting: to.description, tables: report)
        case (.postgres(let fromURL), .postgres(let toURL)):
            let source = try connect(fromURL, environment: environment, logger: logger)
            defer { source.close() }
            let lock = try source.lockForCopy()
            defer { lock.release() }
            return try intoPostgres(
                toURL, from: source, described: source.copyDescription, setting: to, environment: environment,
                logger: logger)
        case (.sqlite, .sqlite):
            throw OffpeakError(.usage, "the workspace's store is already sqlite; nothing to copy")
        }
    }

    private static func openSource(_ file: URL) throws(OffpeakError) -> SQLiteStore {
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw OffpeakError(.usage, "there is no SQLite store at \(file.path); nothing to copy")
        }
        return try SQLiteStore(url: file)
    }

    /// Copies `source` (`described` so in messages) into the PostgreSQL store at `url`.
    private static func intoPostgres(
        _ url: PostgresURL, from source: any StoreCopySource, described: String, setting: StoreLocation,
        environment: [String: String], logger: Logger
    ) throws(OffpeakError) -> StoreCopyOutcome {
        let target = try connect(url, environment: environment, logger: logger)
        defer { target.close() }
        let report = try copy(
            from: source, to: target, schema: schema(target.copyColumns),
            moved: StoreMove.sentence(to: setting.description, at: Date()))
        return StoreCopyOutcome(
            from: described, to: target.copyDescription, setting: setting.description, tables: report)
    }

    private static func connect(_ url: PostgresURL, environment: [String: String], logger: Logger)
        throws(OffpeakError) -> PostgresStore
    {
        try PostgresMigrations.connect(url, environment: environment, logger: logger)
    }

    private static func refuseExisting(_ file: URL) throws(OffpeakError) {
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        throw OffpeakError(
            .usage,
            "\(file.path) exists and may hold work the copy's source does not; move it away, then copy again")
    }

    /// Runs `body` on a new SQLite store beside `file`, handing it what puts the store in place as
    /// `file`: closed first (its WAL folded in), then renamed. On any failure before that the new
    /// file is removed and `file` is as it was.
    private static func intoNewFile<T>(
        _ file: URL, _ body: (SQLiteStore, () throws(OffpeakError) -> Void) throws(OffpeakError) -> T
    ) throws(OffpeakError) -> T {
        let directory = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw OffpeakError(.ioError, "cannot create \(directory.path)", cause: "\(error)")
        }
        let temporary = directory.appendingPathComponent(file.lastPathComponent + ".copying")
        let leftovers = ["", "-wal", "-shm", ".migrate.lock"].map { temporary.path + $0 }
        for path in leftovers { unlink(path) }
        defer { for path in leftovers { unlink(path) } }
        let store = try SQLiteStore(url: temporary)
        var placed = false
        let value = try body(store) { () throws(OffpeakError) in
            try store.close()
            guard rename(temporary.path, file.path) == 0 else {
                throw OffpeakError(
                    .ioError, "cannot put the copy in place at \(file.path)",
                    cause: String(cString: strerror(errno)))
            }
            placed = true
        }
        guard placed else {
            throw OffpeakError(.software, "the copy at \(temporary.path) was never put in place")
        }
        return value
    }
}

/// What `offpeak store copy` did.
public struct StoreCopyOutcome: Sendable, Equatable {
    /// Both stores as messages name them (never with a password).
    public var from: String
    public var to: String
    /// What `store:` must say for a workspace to use the copy (a URL without its password).
    public var setting: String
    /// Rows copied per table, parents first, the counters last.
    public var tables: [Table]

    public struct Table: Sendable, Equatable {
        public var name: String
        public var rows: Int
    }
}
