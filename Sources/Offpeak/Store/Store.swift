import Foundation
import GRDB
import Logging

/// The workspace's store, as the layers above see it: one role each for runs and requests
/// (`runs`), the ledger and budget reservations (`ledger`), provider batches (`batches`),
/// schedules and the deferred queue (`schedules`), submissions (`submissions`), leases
/// (`leases`), the answer cache (`cache`), the hosts seen (`hosts`), the spec each runs each job
/// with (`jobSpecs`), the providers' limits shared by every process (`limits`) and the batch audit
/// (`audits`). Nothing above the store names the engine behind them, its tables or its states.
///
/// Two engines play every role: the embedded SQLite file (`SQLiteStore`), the default, and a shared
/// PostgreSQL database (`PostgresEngine`), as the workspace's `store:` or `OFFPEAK_STORE` says.
public final class Store: Sendable {
    // One field per role of the seam: the store is their facade, and holds no state of its own.
    let runs: any RunStore
    let ledger: any LedgerStore
    let batches: any BatchStore
    let schedules: any ScheduleStore
    let submissions: any SubmissionStore
    let leases: any LeaseStore
    let cache: any AnswerCacheStore
    let hosts: any HostStore
    let jobSpecs: any JobSpecStore
    let limits: any LimitStore
    let audits: any AuditStore
    /// The engine behind the roles, for what is the engine's own (`info()`, tests' looks at rows).
    let engine: Engine

    /// Which engine plays the roles.
    enum Engine: Sendable {
        case sqlite(SQLiteStore)
        case postgres(PostgresEngine)
    }

    convenience init(_ engine: SQLiteStore) {
        self.init(roles: engine, engine: .sqlite(engine))
    }

    convenience init(_ engine: PostgresEngine) {
        self.init(roles: engine, engine: .postgres(engine))
    }

    /// Every role played by `roles`, the one engine.
    private init(
        roles: some RunStore & LedgerStore & BatchStore & ScheduleStore & SubmissionStore & LeaseStore
            & AnswerCacheStore & HostStore & JobSpecStore
            & LimitStore & AuditStore,
        engine: Engine
    ) {
        runs = roles
        ledger = roles
        batches = roles
        schedules = roles
        submissions = roles
        leases = roles
        cache = roles
        hosts = roles
        jobSpecs = roles
        limits = roles
        audits = roles
        self.engine = engine
    }

    /// Where a workspace's store is, and what opening it needs besides: the environment (a
    /// PostgreSQL password may come from `PGPASSWORD` or the password file) and the logger.
    struct Opening: Sendable {
        var workspace: Workspace
        var location: StoreLocation
        var environment: [String: String]
        var logger: Logger
    }

    /// Opens (creating if needed) the workspace's store and brings its schema up to date, for a
    /// command that writes. A SQLite store this process cannot write is refused here, saying so,
    /// rather than failing at some later write; a PostgreSQL store's schema is migrated under its
    /// advisory lock, whichever host connects first.
    /// A store `offpeak store copy` moved elsewhere is refused, saying where it went (`StoreMove`).
    static func open(_ opening: Opening) throws(OffpeakError) -> Store {
        let store: Store
        switch opening.location {
        case .sqlite: store = Store(try SQLiteStore.open(opening.workspace))
        case .postgres(let url): store = try connect(url, opening)
        }
        if let sentence = try store.movedSentence() {
            if case .postgres(let engine) = store.engine { engine.store.close() }
            throw StoreMove.error(sentence)
        }
        return store
    }

    /// What a write to this store is told when `offpeak store copy` moved it (`StoreMove`).
    func movedSentence() throws(OffpeakError) -> String? {
        switch engine {
        case .sqlite(let store): try store.movedSentence()
        case .postgres(let engine): try engine.store.movedSentence()
        }
    }

    /// For commands that only report: the store as `open` gives it when this process can write it,
    /// else (SQLite: someone else's workspace, a read-only mount) opened read-only without creating,
    /// migrating or writing anything.
    static func openForReading(_ opening: Opening) throws(OffpeakError) -> Store {
        switch opening.location {
        case .sqlite: return Store(try SQLiteStore.openForReading(opening.workspace))
        case .postgres(let url): return try connect(url, opening)
        }
    }

    /// The workspace's store for an estimate, or nil when there is none: an estimate plans without
    /// sending or writing anything, so it neither creates a store nor migrates one (SQLite: the file
    /// opened read-only, left as it was; PostgreSQL: a database without offpeak's schema is none,
    /// one at an older version is estimated as new too, rather than migrated by an estimate); a store
    /// a newer offpeak migrated is refused, as every command refuses it.
    static func openReadOnlyIfPresent(_ opening: Opening) throws(OffpeakError) -> Store? {
        switch opening.location {
        case .sqlite:
            return try SQLiteStore.openReadOnlyIfPresent(opening.workspace).map(Store.init)
        case .postgres(let url):
            let store = try PostgresStore.connect(
                url, environment: opening.environment, logger: opening.logger)
            let version: Int?
            do { version = try PostgresMigrations.version(of: store) } catch {
                store.close()
                throw error
            }
            if let version, version > PostgresMigrations.latest {
                store.close()
                throw PostgresMigrations.newer(store, version: version, known: PostgresMigrations.latest)
            }
            guard version == PostgresMigrations.latest else {
                store.close()
                return nil
            }
            return Store(PostgresEngine(store))
        }
    }

    /// The workspace's embedded SQLite store, opened as `open` opens it (the benches).
    public static func open(_ workspace: Workspace) throws(OffpeakError) -> Store {
        Store(try SQLiteStore.open(workspace))
    }

    private static func connect(_ url: PostgresURL, _ opening: Opening) throws(OffpeakError) -> Store {
        Store(
            PostgresEngine(
                try PostgresMigrations.connect(url, environment: opening.environment, logger: opening.logger))
        )
    }

    /// Refuses, saying why, a workspace whose SQLite store this process cannot write. (A PostgreSQL
    /// store's permissions are the server's: a write it refuses fails with the server's reason.)
    static func requireWritable(_ opening: Opening) throws(OffpeakError) {
        guard case .sqlite = opening.location else { return }
        try SQLiteStore.requireWritable(opening.workspace)
    }

    /// A store on the SQLite file at `url` (tests).
    convenience init(url: URL) throws(OffpeakError) {
        self.init(try SQLiteStore(url: url))
    }

    /// A store on the SQLite file at `url` whose every connection runs `prepare` when it opens
    /// (tests trace statements with it).
    convenience init(url: URL, prepare: @escaping @Sendable (Database) throws -> Void) throws(OffpeakError) {
        self.init(try SQLiteStore(url: url, prepare: prepare))
    }

    /// This process, as a lease owner: `host:pid` (see `ProcessOwner`).
    static var processOwner: String { ProcessOwner.current }

    /// A canceled run's reason: canceling while `inBatch` items are still out, then canceled.
    static func cancelReason(inBatch: Int) -> String {
        inBatch > 0
            ? "canceling: \(Plural.count(inBatch, "item")) in provider batches asked to cancel"
            : "canceled by the user"
    }
}
