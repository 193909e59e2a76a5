import Foundation
import GRDB

/// The workspace's store, as the layers above see it: one role each for runs and requests
/// (`runs`), the ledger and budget reservations (`ledger`), provider batches (`batches`),
/// schedules and the deferred queue (`schedules`), submissions (`submissions`), leases
/// (`leases`) and the answer cache (`cache`). Nothing above the store names the engine behind them, its tables or its states.
///
/// The engine today is the embedded SQLite file (`SQLiteStore`), which plays every role.
public final class Store: Sendable {
    let runs: any RunStore
    let ledger: any LedgerStore
    let batches: any BatchStore
    let schedules: any ScheduleStore
    let submissions: any SubmissionStore
    let leases: any LeaseStore
    let cache: any AnswerCacheStore
    /// The engine behind the roles, for what is the engine's own (`info()`, tests' looks at rows).
    let engine: Engine

    /// Which engine plays the roles.
    enum Engine: Sendable {
        case sqlite(SQLiteStore)
    }

    init(_ engine: SQLiteStore) {
        runs = engine
        ledger = engine
        batches = engine
        schedules = engine
        submissions = engine
        leases = engine
        cache = engine
        self.engine = .sqlite(engine)
    }

    /// Opens (creating if needed) the workspace's store and brings its schema up to date, for a
    /// command that writes. A store this process cannot write is refused here, saying so, rather
    /// than failing at some later write.
    public static func open(_ workspace: Workspace) throws(OffpeakError) -> Store {
        Store(try SQLiteStore.open(workspace))
    }

    /// For commands that only report: the store as `open` gives it when this process can write it,
    /// else opened read-only (someone else's workspace, a read-only mount) without creating,
    /// migrating or writing anything.
    static func openForReading(_ workspace: Workspace) throws(OffpeakError) -> Store {
        Store(try SQLiteStore.openForReading(workspace))
    }

    /// The workspace's store opened read-only, whoever could write it, or nil when there is none:
    /// an estimate plans without sending or writing anything, so it neither creates a store nor
    /// migrates one, and leaves the file as it was.
    static func openReadOnlyIfPresent(_ workspace: Workspace) throws(OffpeakError) -> Store? {
        try SQLiteStore.openReadOnlyIfPresent(workspace).map(Store.init)
    }

    /// Refuses, saying why, a workspace whose store this process cannot write.
    static func requireWritable(_ workspace: Workspace) throws(OffpeakError) {
        try SQLiteStore.requireWritable(workspace)
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
