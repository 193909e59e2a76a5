import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The two engines of the store seam, for tests that run one scenario on each and assert the same
/// observable results through the role protocols.
enum StoreEngine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgresql

    var testDescription: String { rawValue }

    /// The roles on a fresh store of this engine: a new SQLite file, or a new database of
    /// the test cluster with the schema migrated.
    func roles() throws -> StoreRoles {
        switch self {
        case .sqlite:
            let workspace = try TemporaryWorkspace()
            let store = try Store(url: workspace.root.appendingPathComponent("offpeak.sqlite"))
            return StoreRoles(
                runs: store.runs, submissions: store.submissions, leases: store.leases,
                schedules: store.schedules, batches: store.batches, keep: [workspace, store], close: {})
        case .postgresql:
            let store = try PostgresStoreTests.connect()
            try PostgresMigrations.migrate(store)
            let engine = PostgresEngine(store)
            return StoreRoles(
                runs: engine, submissions: engine, leases: engine, schedules: engine, batches: engine,
                keep: [engine], close: { store.close() })
        }
    }
}

/// One store's roles, and what must live as long as they do.
final class StoreRoles: @unchecked Sendable {
    let runs: any RunStore
    let submissions: any SubmissionStore
    let leases: any LeaseStore
    let schedules: any ScheduleStore
    let batches: any BatchStore
    private let keep: [AnyObject]
    private let close: () -> Void

    init(
        runs: any RunStore, submissions: any SubmissionStore, leases: any LeaseStore,
        schedules: any ScheduleStore, batches: any BatchStore, keep: [AnyObject], close: @escaping () -> Void
    ) {
        self.runs = runs
        self.submissions = submissions
        self.leases = leases
        self.schedules = schedules
        self.batches = batches
        self.keep = keep
        self.close = close
    }

    deinit { close() }
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
