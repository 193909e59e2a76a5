import Foundation
import OffpeakTestSupport
import PostgresNIO
import Testing

@testable import Offpeak

/// The two engines of the store seam, for tests that run one scenario on each and assert the same
/// observable results through the role protocols.
enum StoreEngine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgresql

    var testDescription: String { rawValue }

    /// The roles on a fresh store of this engine: a new SQLite file, or a new database of the test
    /// cluster with the schema migrated.
    func roles() throws -> StoreRoles {
        switch self {
        case .sqlite:
            let workspace = try TemporaryWorkspace()
            return try Self.sqlite(
                workspace.root.appendingPathComponent("offpeak.sqlite"), keeping: workspace)
        case .postgresql:
            return try Self.postgres(try PostgresCluster.shared.makeDatabase())
        }
    }

    private static func sqlite(_ url: URL, keeping workspace: TemporaryWorkspace) throws -> StoreRoles {
        let store = try Store(url: url)
        return StoreRoles(
            runs: store.runs, submissions: store.submissions, leases: store.leases,
            schedules: store.schedules, batches: store.batches,
            ledger: store.ledger, cache: store.cache, limits: store.limits, keep: [workspace, store],
            close: {},
            reopen: { try sqlite(url, keeping: workspace) },
            execute: { sql in try store.sqlite.write { db in try db.execute(sql: sql) } })
    }

    private static func postgres(_ url: String) throws -> StoreRoles {
        let store = try PostgresStoreTests.connect(url)
        try PostgresMigrations.migrate(store)
        let engine = PostgresEngine(store)
        return StoreRoles(
            runs: engine, submissions: engine, leases: engine, schedules: engine, batches: engine,
            ledger: engine, cache: engine, limits: engine,
            keep: [engine], close: { store.close() }, reopen: { try postgres(url) },
            execute: { sql in try store.query(PostgresQuery(unsafeSQL: sql)) })
    }
}

/// One store's roles, and what must live as long as they do.
final class StoreRoles: @unchecked Sendable {
    let runs: any RunStore
    let submissions: any SubmissionStore
    let leases: any LeaseStore
    let schedules: any ScheduleStore
    let batches: any BatchStore
    let ledger: any LedgerStore
    let cache: any AnswerCacheStore
    let limits: any LimitStore
    private let keep: [AnyObject]
    private let close: () -> Void
    private let reopen: () throws -> StoreRoles
    private let runSQL: (String) throws -> Void

    init(
        runs: any RunStore, submissions: any SubmissionStore, leases: any LeaseStore,
        schedules: any ScheduleStore, batches: any BatchStore, ledger: any LedgerStore,
        cache: any AnswerCacheStore, limits: any LimitStore, keep: [AnyObject],
        close: @escaping () -> Void, reopen: @escaping () throws -> StoreRoles,
        execute: @escaping (String) throws -> Void
    ) {
        self.runs = runs
        self.submissions = submissions
        self.leases = leases
        self.schedules = schedules
        self.batches = batches
        self.ledger = ledger
        self.cache = cache
        self.limits = limits
        self.keep = keep
        self.close = close
        self.reopen = reopen
        self.runSQL = execute
    }

    deinit { close() }

    /// The same store opened again, as another process would: its own connections.
    func another() throws -> StoreRoles { try reopen() }

    /// Runs `sql` as it is, for rows no role of the test writes (a provider batch); it must read the
    /// same on both engines.
    func execute(_ sql: String) throws { try runSQL(sql) }
}

/// Records for the role tests, their times whole seconds (both engines keep them exactly).
enum RoleFixtures {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func run(_ id: String, job: String = "j", state: RunState = .idle, at time: Date = t0) -> RunRecord
    {
        RunRecord(
            id: id, job: job, kind: "prompt", specHash: "h", state: state, reason: nil, budgetStop: nil,
            provider: "sim", model: "m", tier: "fast", downgraded: false, forced: false, itemsTotal: 0,
            itemsDone: 0, itemsFailed: 0, itemsCached: 0, createdAt: time, startedAt: nil, updatedAt: time,
            finishedAt: nil, deadlineAt: nil, spec: "{}")
    }

    static func request(
        _ item: String, run: String, position: Int, payload: String = "p", source: RequestSource = .spec,
        state: RequestRecord.State = .pending, job: String = "j"
    ) -> RequestRecord {
        RequestRecord(
            id: "\(run)/\(item)", runId: run, job: job, itemId: item, position: position, source: source,
            clientId: nil, tier: "fast", payload: payload, cacheKey: "k-\(item)", state: state, attempts: 0,
            nextAttemptAt: nil, error: nil, createdAt: t0, updatedAt: t0)
    }

    static func requests(_ count: Int, run: String) -> [RequestRecord] {
        (0..<count).map { request("i\($0)", run: run, position: $0) }
    }

    static func result(_ request: RequestRecord, fromCache: Bool = false) -> ResultRecord {
        ResultRecord(
            requestId: request.id, runId: request.runId, text: "answer to \(request.itemId)",
            finishReason: "stop", model: "m", fromCache: fromCache, ledgerId: nil, inputTokens: 10,
            outputTokens: 5, dollars: 0.25, createdAt: t0)
    }

    static func ledger(run: String, items: Int, dollars: Double = 0.5, cacheHit: Bool = false) -> LedgerEntry
    {
        LedgerEntry(
            id: nil, at: t0, job: "j", runId: run, provider: "sim", model: "m", tier: "fast",
            downgraded: false, items: items, inputTokens: 100, outputTokens: 20, cacheReadTokens: 3,
            cacheWriteTokens: 1, dollars: cacheHit ? 0 : dollars, naiveDollars: 1.0, batchApi: false,
            cacheHit: cacheHit, usageEstimated: false, latencyMs: 40)
    }

    /// A canonical payload whose system prompt is long enough to be stored once (`StoredPayload`).
    static func sharedPayload(_ item: String) -> String {
        let system = String(repeating: "House rule: answer kindly, \"briefly\" and in one line.\n", count: 20)
        return CanonicalJSON.text(
            CompletionRequest(
                model: "m", system: system, messages: [ChatMessage(role: .user, content: item)], maxTokens: 50
            ))
    }
}
