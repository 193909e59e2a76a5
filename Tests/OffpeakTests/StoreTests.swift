import Foundation
import GRDB
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The store through its real migrator, on a real SQLite file per test.
@Suite(.ownThreads) struct StoreTests {
    static func store(_ workspace: TemporaryWorkspace) throws -> Store {
        try workspace.openStore()
    }

    static func run(_ id: String, job: String = "j", state: RunState = .idle) -> RunRecord {
        let now = Date()
        return RunRecord(
            id: id, job: job, kind: "prompt", specHash: "h", state: state, reason: nil, budgetStop: nil,
            provider: "sim", model: "m", tier: "fast", downgraded: false, forced: false, itemsTotal: 0,
            itemsDone: 0, itemsFailed: 0, itemsCached: 0, createdAt: now, startedAt: nil, updatedAt: now,
            finishedAt: nil, deadlineAt: nil)
    }

    static func request(_ item: String, run: String, position: Int, payload: String = "p") -> RequestRecord {
        RequestRecord(
            id: RequestRecord.newID(), runId: run, job: "j", itemId: item, position: position, source: .spec,
            clientId: nil, tier: "fast", payload: payload, cacheKey: "k", state: .pending, attempts: 0,
            nextAttemptAt: nil, error: nil, createdAt: Date(), updatedAt: Date())
    }

    // SQLite only: the engine's own tables, journal mode and file permissions.
    @Test(.sqliteOnly) func migratorCreatesTheWholeSchemaOwnerOnly() throws {
        let workspace = try TemporaryWorkspace()
        let store = try Self.store(workspace)
        let tables = try store.sqlite.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }
        for table in [
            "cache_entries", "checkpoints", "deferred", "leases", "ledger", "model_latency",
            "provider_batches",
            "requests", "results", "runs", "schedules", "spool_not_taken",
        ] {
            #expect(tables.contains(table), "missing table \(table)")
        }
        let mode = try store.sqlite.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        let attributes = try FileManager.default.attributesOfItem(atPath: store.sqlite.url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        _ = try Self.store(workspace)  // opening again migrates nothing and fails nothing
    }

    @Test func runStateTransitionsAreValidated() throws {
        #expect(RunState.running.canMove(to: .interrupted))
        #expect(RunState.interrupted.canMove(to: .running))
        #expect(!RunState.completed.canMove(to: .running))
        #expect(!RunState.failed.canMove(to: .running))
        #expect(!RunState.idle.canMove(to: .completed))
        var run = Self.run("r1", state: .completed)
        #expect(throws: InvalidTransition.self) { try run.move(to: .running, reason: nil, at: Date()) }
        #expect(run.state == .completed)
    }

    @Test func mergeAddsNewItemsDropsRemovedOnesAndKeepsAnswers() throws {
        let workspace = try TemporaryWorkspace()
        let store = try Self.store(workspace)
        let a = Self.request("a", run: "r1", position: 0)
        try store.runs.insert(
            run: Self.run("r1"),
            requests: [
                a, Self.request("b", run: "r1", position: 1), Self.request("c", run: "r1", position: 2),
            ])
        try store.execute("UPDATE requests SET state = 'done' WHERE id = ?", [a.id])
        try store.runs.merge(
            requests: [
                Self.request("a", run: "r1", position: 0, payload: "changed"),
                Self.request("x", run: "r1", position: 1),
                Self.request("c", run: "r1", position: 2, payload: "new"),
            ], into: "r1")
        let requests = try store.runs.requests(runID: "r1")
        #expect(requests.map(\.itemId) == ["a", "x", "c"])
        #expect(requests[0].payload == "p", "an answered request is never rewritten")
        #expect(requests[0].state == .done)
        #expect(requests[2].payload == "new", "a pending request follows the spec")
        #expect(try store.runs.run(id: "r1")?.itemsTotal == 3)
    }

    @Test func leaseOfALiveOwnerBlocksAndOfADeadProcessIsTakenOver() throws {
        let workspace = try TemporaryWorkspace()
        let store = try Self.store(workspace)
        try store.runs.insert(run: Self.run("r1"), requests: [])
        #expect(
            try store.leases.acquireLease(runID: "r1", owner: "elsewhere:1", host: "test-host", ttl: 60)
                == nil)
        #expect(
            try store.leases.acquireLease(runID: "r1", owner: Store.processOwner, host: "test-host", ttl: 60)
                == "elsewhere:1")
        // A lease that expired is taken over.
        #expect(
            try store.leases.acquireLease(runID: "r1", owner: "elsewhere:1", host: "test-host", ttl: -1)
                == nil)
        #expect(
            try store.leases.acquireLease(runID: "r1", owner: Store.processOwner, host: "test-host", ttl: 60)
                == nil)
        // A live lease held by a process of this host that is gone (pid far above pid_max) is taken over.
        try store.leases.releaseLease(runID: "r1", owner: Store.processOwner)
        let host = Store.processOwner.split(separator: ":")[0]
        #expect(
            try store.leases.acquireLease(runID: "r1", owner: "\(host):99999999", host: "test-host", ttl: 60)
                == nil)
        #expect(
            try store.leases.acquireLease(runID: "r1", owner: Store.processOwner, host: "test-host", ttl: 60)
                == nil)
    }

    @Test func outputFileNamesAreSafeAndUnique() {
        let names = OutputWriter.fileNames(for: ["docs/a.md", "docs/a.txt", "../x", "index", "q?"])
        #expect(names == ["docs-a.md", "docs-a-2.md", "item..-x.md", "index.md", "q-.md"])
    }

    /// A writer killed mid-write leaves its temporary file; the next write removes it, unless its
    /// writer may still be alive (a live process here, or any process of another host).
    @Test func outputWriterRemovesTheTemporaryFilesOfKilledWriters() throws {
        let workspace = try TemporaryWorkspace()
        let host = Store.processOwner.split(separator: ":")[0]
        let dead = "\(AtomicFile.temporaryPrefix)\(host):99999999-a.md"  // pid far above pid_max
        let live = "\(AtomicFile.temporaryPrefix)\(host):1-b.md"  // init is always running
        let elsewhere = "\(AtomicFile.temporaryPrefix)other-host:99999999-c.md"  // cannot be told
        for name in [dead, live, elsewhere] { _ = try workspace.write("out/j/\(name)", "half an ans") }
        let request = Self.request("a.txt", run: "r1", position: 0)
        let result = ResultRecord(
            requestId: request.id, runId: "r1", text: "An answer.", finishReason: "end_turn", model: "m",
            fromCache: false, ledgerId: nil, inputTokens: 1, outputTokens: 1, dollars: 0, createdAt: Date())
        let writer = OutputWriter(directory: workspace.root.appendingPathComponent("out/j"))
        #expect(
            try writer.write(job: "j", runID: "r1", requests: [request], results: [request.id: result])
                .rewritten == 1)
        let files = workspace.snapshot("out/j")
        #expect(Set(files.keys) == ["a.md", "index.json", live, elsewhere])
        #expect(files["a.md"] == "An answer.\n")
    }

    @Test func sha256MatchesKnownVectors() {
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let long = String(repeating: "a", count: 1000)
        #expect(SHA256.hex(long) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test func budgetGuardStopsBeforeTheCallThatWouldPassALimit() {
        var spent = Spend()
        spent.calls = 2
        spent.inputTokens = 900
        spent.outputTokens = 100
        spent.dollars = 0.9
        let guardrail = BudgetGuard(budget: JobSpec.Budget(maxInputTokens: 1000, maxCalls: 3, maxDollars: 1))
        #expect(
            guardrail.check(spent: spent, inputTokens: 50, maxOutputTokens: 10, worstDollars: 0.05) == nil)
        #expect(
            guardrail.check(spent: spent, inputTokens: 150, maxOutputTokens: 10, worstDollars: 0)?.limit
                == .maxInputTokens)
        #expect(
            guardrail.check(spent: spent, inputTokens: 50, maxOutputTokens: 10, worstDollars: 0.2)?.limit
                == .maxDollars)
        spent.calls = 3
        #expect(
            guardrail.check(spent: spent, inputTokens: 1, maxOutputTokens: 1, worstDollars: 0)?.limit
                == .maxCalls)
    }

    /// A run id ends in exactly 8 hex digits, so the ids of one job have one width: `status`'s
    /// table lines up the same way whatever the draw (a 3-digit suffix came 1 time in 16).
    @Test func runIDsHaveOneWidth() {
        let date = Date(timeIntervalSince1970: 1_795_000_000)
        let suffixes = (0..<2_000).map { _ in
            RunRecord.newID(job: "j", at: date).split(separator: "-").last ?? ""
        }
        #expect(suffixes.allSatisfy { $0.count == 8 && $0.allSatisfy(\.isHexDigit) })
    }
}
