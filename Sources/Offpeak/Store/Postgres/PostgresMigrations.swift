import Logging
import PostgresNIO

/// The PostgreSQL store's schema, version by version, applied by whichever process connects first.
///
/// Hosts share the store, so two may open it at once: the whole check-and-apply runs under one
/// session advisory lock (`lockKey`), and each version commits in its own transaction together with
/// its row in `offpeak_schema`, so a process killed halfway leaves the last whole version. A store
/// whose version is newer than this binary knows is refused: an older offpeak must not write rows
/// a newer schema reads differently.
enum PostgresMigrations {
    /// One version: its statements, run in order in one transaction.
    struct Migration: Sendable {
        var version: Int
        var name: String
        var statements: [String]
    }

    /// Every version, in order, change by change (`SchemaChange`). A released one is never edited;
    /// later work appends.
    static let all: [Migration] = SchemaChange.allCases.flatMap(versions(making:))

    /// The versions that make `change`, in order; an engine's own versions go with the change they
    /// follow (v2 to v5, the counters kept by triggers, with `base`; v9 with `sharedLimits`).
    static func versions(making change: SchemaChange) -> [Migration] {
        switch change {
        case .base:
            return [
                Migration(
                    version: 1, name: "the SQLite store's tables as of its v13",
                    statements: PostgresSchema.version1),
                Migration(
                    version: 2, name: "the run counters kept by triggers, retries without a time first",
                    statements: PostgresSchema.version2),
                Migration(
                    version: 3,
                    name: "the cache's totals kept by triggers, its eviction index",
                    statements: PostgresSchema.version3),
                Migration(
                    version: 4, name: "a request's run checked once per statement, not per row",
                    statements: PostgresSchema.version4),
                Migration(
                    version: 5,
                    name: "the run counters' answers looked up by key, whatever the tables' statistics",
                    statements: PostgresSchema.version5),
            ]
        case .hosts:
            return [
                Migration(
                    version: 6, name: "the host of each lease, reservation and ledger row; the hosts seen",
                    statements: PostgresSchema.version6)
            ]
        case .jobSpecs:
            return [
                Migration(
                    version: 7, name: "the spec each host runs each job with",
                    statements: PostgresSchema.version7)
            ]
        case .sharedLimits:
            return [
                Migration(
                    version: 8, name: "the providers' limits shared by every host",
                    statements: PostgresSchema.version8),
                Migration(
                    version: 9, name: "a commit refused once its process lost the run's lease",
                    statements: PostgresSchema.version9),
            ]
        case .claims:
            return [
                Migration(
                    version: 10, name: "claims on rounds of a run's requests, so several hosts work one run",
                    statements: PostgresSchema.version10)
            ]
        case .deferringHosts:
            return [
                Migration(
                    version: 11, name: "the host that deferred each job and that sent each provider batch",
                    statements: PostgresSchema.version11)
            ]
        case .reuse:
            return [
                Migration(
                    version: 12,
                    name: "answers reused while their prompt is unchanged; the sources behind each request",
                    statements: PostgresSchema.version12)
            ]
        case .searches:
            return [
                Migration(
                    version: 13, name: "the web searches each call ran; the search results each answer cited",
                    statements: PostgresSchema.version13)
            ]
        case .audits:
            return [
                Migration(
                    version: 14,
                    name: "the batch audit: audit calls in the ledger, audited items, audit records",
                    statements: PostgresSchema.version14)
            ]
        case .auditBatches:
            return [
                Migration(
                    version: 15, name: "audit requests in provider batches",
                    statements: PostgresSchema.version15)
            ]
        case .flex:
            return [
                Migration(
                    version: 16, name: "calls made with flex processing", statements: PostgresSchema.version16
                )
            ]
        case .queuedAudits:
            return [
                Migration(
                    version: 17, name: "audits queued with the batched answers they check",
                    statements: PostgresSchema.version17)
            ]
        case .answeredItems:
            return [
                Migration(
                    version: 18, name: "the answered items of a job found by an index",
                    statements: PostgresSchema.version18)
            ]
        case .retention:
            return [
                Migration(
                    version: 19, name: "retention: pruned runs, and the items they answered",
                    statements: PostgresSchema.version19)
            ]
        case .lostCalls:
            return [
                Migration(
                    version: 20, name: "calls in flight, booked as lost when their process dies",
                    statements: PostgresSchema.version20)
            ]
        case .probeClaims:
            return [
                Migration(
                    version: 21, name: "claims on probing a batch size", statements: PostgresSchema.version21)
            ]
        case .rolledLedger:
            return [
                Migration(
                    version: 22, name: "the ledger rolled up by day", statements: PostgresSchema.version22)
            ]
        case .ledgerWindowsAndTags:
            return [
                Migration(
                    version: 23, name: "the price window, waiting's savings and the tags of each call",
                    statements: PostgresSchema.version23)
            ]
        case .providerOutages:
            return [
                Migration(
                    version: 24, name: "provider routes found down, for their fallbacks",
                    statements: ProviderOutage.tableStatements(postgres: true))
            ]
        }
    }

    static var latest: Int { all.last?.version ?? 0 }

    /// The advisory lock's key: the seven ASCII bytes of "offpeak" read as one big-endian number,
    /// fixed so every offpeak of every version takes the same lock.
    static let lockKey: Int64 = "offpeak".utf8.reduce(0) { $0 << 8 | Int64($1) }

    static let createSchemaTable = """
        CREATE TABLE IF NOT EXISTS offpeak_schema (
            version integer PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now())
        """

    /// Connects to the store `url` names and brings its schema up to date, as every command that
    /// uses a PostgreSQL store opens it; the connection is closed again when that fails.
    static func connect(_ url: PostgresURL, environment: [String: String], logger: Logger)
        throws(OffpeakError) -> PostgresStore
    {
        let store = try PostgresStore.connect(url, environment: environment, logger: logger)
        do { try migrate(store) } catch {
            store.close()
            throw error
        }
        return store
    }

    /// Brings the store up to `migrations`' last version; returns the version it is at.
    ///
    /// Each step is one transaction that takes the migrations' advisory lock for itself (a
    /// transaction's lock, which a pooler in transaction mode keeps with the transaction, where a
    /// session's would be left on whichever server connection took it) and reads the version again
    /// under it: processes starting together apply each version once, in order.
    /// - Throws: `.configuration` when the store is newer than `migrations`; the store's faults.
    @discardableResult
    static func migrate(_ store: PostgresStore, migrations: [Migration] = all) throws(OffpeakError) -> Int {
        let known = migrations.last?.version ?? 0
        var current = try store.transaction { () throws(OffpeakError) -> Int in
            try store.query("SELECT pg_advisory_xact_lock(\(lockKey))")
            try store.query(PostgresQuery(unsafeSQL: createSchemaTable))
            return try version(of: store) ?? 0
        }
        if current > known { throw newer(store, version: current, known: known) }
        for migration in migrations where migration.version > current {
            let applied = try store.transaction { () throws(OffpeakError) -> Bool in
                try store.query("SELECT pg_advisory_xact_lock(\(lockKey))")
                guard try (version(of: store) ?? 0) < migration.version else { return false }
                for statement in migration.statements { try store.query(PostgresQuery(unsafeSQL: statement)) }
                try store.query("INSERT INTO offpeak_schema (version) VALUES (\(migration.version))")
                return true
            }
            if applied {
                store.logger.info(
                    "PostgreSQL store at \(store.url.endpoint): schema version \(migration.version) applied")
            }
            current = migration.version
        }
        return current
    }

    /// The store's schema version; `nil` when offpeak has never set it up there.
    static func version(of store: PostgresStore) throws(OffpeakError) -> Int? {
        let exists = try store.query("SELECT to_regclass('offpeak_schema') IS NOT NULL")
        guard let row = exists.first, try store.decode(row, as: Bool.self) else { return nil }
        guard let row = try store.query("SELECT max(version) FROM offpeak_schema").first else { return nil }
        return try store.decode(row, as: Int?.self)
    }

    /// A store written by a newer offpeak.
    static func newer(_ store: PostgresStore, version: Int, known: Int) -> OffpeakError {
        OffpeakError(
            .configuration,
            "the PostgreSQL store at \(store.url.endpoint) database '\(store.url.database)' has schema "
                + "version \(version), newer than this offpeak knows (\(known)); upgrade offpeak")
    }
}
