import Foundation
import Logging
import PostgresNIO

/// The PostgreSQL engine of the store seam: the roles a run's path needs (`RunStore`,
/// `SubmissionStore`, `LeaseStore`), `ScheduleStore`, `BatchStore`, `LedgerStore` and
/// `AnswerCacheStore`, on a pool of connections (`PostgresStore`), with the semantics of the SQLite
/// engine method by method; most of the roles' rules are written once above both engines (`SQLEngine`).
///
/// The guarantees come from the server, not from this process: each method that writes runs in one
/// transaction; what SQLite gets from its one writer (two decisions never see the same rows) comes
/// from row locks on the run (`lockRun`) and a batch (`lockBatch`), conditional updates (a request
/// joins a batch while still pending; a batch result is booked while its items have no outcome) and
/// transaction advisory locks: one per job (`lockJob`), one over the budgets (`lockBudgets`), one per
/// provider's limits (`SQLLock.limits`) and one over the cache (`lockCache`), so it holds across
/// processes and hosts. Reads SQLite makes in one
/// read transaction are made in one snapshot (`snapshot`). The counters (`run_items`, `run_spend`,
/// `cache_totals`) are kept by the server's triggers (`PostgresSchema.version2`, `version3`), as
/// SQLite keeps its own.
final class PostgresEngine: Sendable {
    let store: PostgresStore
    /// The fitness records this engine last read or wrote (`sendUpdate`).
    let fitnessTexts = SeenFitness()

    /// The engine on `store`, whose schema `PostgresMigrations.migrate` brought up to date.
    init(_ store: PostgresStore) {
        self.store = store
    }

    /// Connects and migrates: the engine of the store `url` names.
    static func open(
        _ url: PostgresURL, environment: [String: String], logger: Logger
    ) throws(OffpeakError) -> PostgresEngine {
        let store = try PostgresStore.connect(url, environment: environment, logger: logger)
        try PostgresMigrations.migrate(store)
        return PostgresEngine(store)
    }

    /// Locks the run's row until the transaction ends: commits, merges, cancels and step decisions
    /// on one run take turns, as SQLite's one writer makes them. Returns whether the run exists.
    @discardableResult
    func lockRun(_ runID: String) throws(OffpeakError) -> Bool {
        !(try store.query("SELECT 1 FROM runs WHERE id = \(runID) FOR UPDATE")).isEmpty
    }

    /// Takes the job's transaction advisory lock: two processes deciding whether the job has an open
    /// run (to add to it, or to make one) take turns, so they never make one each.
    func lockJob(_ job: String) throws(OffpeakError) {
        try store.query("SELECT pg_advisory_xact_lock(hashtextextended(\("offpeak job " + job), 0))")
    }
}

/// A row's columns read by name: a value that does not decode is a store error naming the server
/// and the column.
struct PostgresColumns {
    let row: PostgresRandomAccessRow
    let endpoint: String

    init(_ row: PostgresRow, _ store: PostgresStore) {
        self.row = row.makeRandomAccess()
        endpoint = store.url.endpoint
    }

    func callAsFunction<Value: PostgresDecodable>(_ name: String, as type: Value.Type = Value.self)
        throws(OffpeakError) -> Value
    {
        do { return try cell(name).decode(Value.self, context: .default) } catch let error as OffpeakError {
            throw error
        } catch {
            let cause =
                (error as? PostgresDecodingError).map { "\($0.code)" } ?? "\(error)"
            throw OffpeakError(
                .ioError, "PostgreSQL at \(endpoint) answered a row offpeak cannot read (column \(name))",
                cause: cause)
        }
    }

    /// Whether the column holds NULL.
    func isNull(_ name: String) throws(OffpeakError) -> Bool {
        try cell(name).bytes == nil
    }

    /// The named column's cell; a row without it is a store error, not postgres-nio's trap.
    private func cell(_ name: String) throws(OffpeakError) -> PostgresCell {
        guard row.contains(name) else {
            throw OffpeakError(.ioError, "PostgreSQL at \(endpoint) answered a row without column \(name)")
        }
        return row[name]
    }

    /// A text column holding a Swift enum's raw value.
    func value<Value: RawRepresentable>(_ name: String, as type: Value.Type) throws(OffpeakError) -> Value
    where Value.RawValue == String {
        let text = try self(name, as: String.self)
        guard let value = Value(rawValue: text) else {
            throw OffpeakError(
                .dataError, "PostgreSQL at \(endpoint): column \(name) holds an unknown value \"\(text)\"")
        }
        return value
    }

    /// A nullable text column holding a Swift enum's raw value.
    func value<Value: RawRepresentable>(_ name: String, as type: Value?.Type) throws(OffpeakError) -> Value?
    where Value.RawValue == String {
        guard try self(name, as: String?.self) != nil else { return nil }
        return try value(name, as: Value.self)
    }
}
