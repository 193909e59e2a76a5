import Foundation
import GRDB
import OffpeakTestSupport
import Synchronization
import Testing

@testable import Offpeak

/// `offpeak store copy` (the built binary): a workspace's SQLite store, made by real runs (live and
/// batch lanes, the cache) and the roles' writes (schedules, the deferred queue, the spool,
/// a reservation, a lease, an audit), copied to PostgreSQL and back; every table compared both ways.
@Suite(.ownThreads, .serialized) struct StoreCopyTests {
    static let cluster = PostgresCluster.shared

    /// A workspace whose store holds rows in every table but the ones `sparse` names.
    static func populatedWorkspace() throws -> TemporaryWorkspace {
        let sim = try SimProcess(arguments: ["--batch-delay", "0"])
        let workspace = try BatchLaneTests.workspace(sim, count: 8)
        try workspace.writeDocuments(4)
        try workspace.write(
            "jobs/docs.yaml",
            "kind: summarize\ninputs: [docs/*.md]\nmax_tokens: 200\nschedule: \"0 3 * * *\"\n")
        #expect(try workspace.offpeak(["run", "docs"]).status == 0)
        #expect(try workspace.offpeak(["run", "classify"]).status == 75, "submitted, not yet collected")
        BatchLaneTests.waitForTheBatchToEnd()
        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 0, "\(tick.stderr)")
        let store = try BatchLaneTests.store(workspace)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000.125)
        try store.schedules.deferJob(
            "later", run: nil, reasons: "on battery; metered", host: "test-host", at: t0)
        _ = try store.schedules.noteNotTaken(
            job: "inbox", found: ["sub": "a folder; offpeak takes only regular files"], at: t0)
        let run = try #require(try store.runs.runs().first { $0.job == "docs" })
        let held = try store.ledger.reserveBudget(
            BudgetAsk(
                job: "docs", runID: run.id, owner: "host-a/1", host: "test-host", dollars: 0.25, tokens: 900),
            limits: BudgetLimits(workspace: WorkspaceBudget(perDay: 100)), now: t0)
        #expect((try? held.get()) != nil)
        #expect(
            try store.leases.acquireLease(
                runID: run.id, owner: "host-a/1", host: "test-host", ttl: 600, now: t0) == nil)
        try store.batches.updateBatchFitness(provider: "openai", model: "m", at: t0) {
            $0.record(asked: 4, kept: 1, rejected: ["missing from the answer": 3], structured: false, at: t0)
        }
        // An audited item of the docs run: its ledger row marked audit, its row, the job's record.
        let audited = try #require(try store.runs.requests(runID: run.id).first)
        try store.audits.commitAudit(AuditStoreTests.audit(audited, at: t0, agreed: true, dollars: 0.125))
        // An audit of another of its items still to make, queued as a batched call's commit queues it.
        let queued = try #require(try store.runs.requests(runID: run.id).last)
        _ = try store.runs.commit(
            CallCommit(
                run: run, ledger: nil, results: [],
                audits: [QueuedAudit(requestID: queued.id, size: 4, position: 4, probe: true)]))
        // A request whose long system prompt is stored once (`shared_texts`).
        let long = RoleFixtures.run("r-long", job: "long", at: t0)
        var request = RoleFixtures.request("i0", run: long.id, position: 0, job: "long")
        request.payload = RoleFixtures.sharedPayload("i0")
        try store.runs.insert(run: long, requests: [request])
        // Its request out in a provider batch, also asked alone there by the batch audit.
        _ = try store.batches.prepareBatch(
            runID: long.id, provider: "sim", model: "m", calls: [[request.id]],
            audits: [BatchAuditSlot(requestID: request.id, size: 1, position: 1)], worstDollars: 0.5,
            worstTokens: (10, 20), host: "test-host", now: t0)
        return workspace
    }

    /// Tables a populated workspace leaves empty.
    static let sparse: Set<String> = ["answered_items"]  // only pruned runs leave rows there

    static var tables: [String] { StoreCopy.tables + StoreCopy.counterTables }

    /// Each table's rows as GRDB describes them, sorted: two stores hold the same when these match.
    static func sqliteRows(_ file: URL) throws -> [String: [String]] {
        let queue = try DatabaseQueue(path: file.path)
        return try queue.read { db in
            var rows: [String: [String]] = [:]
            for table in tables {
                rows[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table)").map(\.description).sorted()
            }
            return rows
        }
    }

    /// Each table's rows as PostgreSQL writes them as JSON, sorted.
    static func postgresRows(_ url: String) throws -> [String: [String]] {
        var rows: [String: [String]] = [:]
        for table in tables {
            let text = try cluster.psql(
                "SELECT row_to_json(t)::text FROM \(table) t", database: database(url))
            rows[table] = text.split(separator: "\n").map(String.init).sorted()
        }
        return rows
    }

    static func database(_ url: String) -> String {
        String(url.split(separator: "/").last?.split(separator: "?").first ?? "")
    }

    static func copy(_ workspace: TemporaryWorkspace, to target: String, store: String? = nil) throws
        -> CommandResult
    {
        var environment: [String: String?] = cluster.environment.mapValues { $0 }
        environment[StoreLocation.variable] = store
        return try workspace.offpeak(["store", "copy", "--to", target], environment: environment)
    }

    /// What the command prints for a copy of `counts`.
    static func expected(from: String, to: String, counts: [String: Int], use: String) -> String {
        let table = TextTable(columns: ["TABLE", "ROWS"])
        for name in tables { table.add([name, String(counts[name] ?? -1)]) }
        return "copied \(from)\n    to \(to)\n" + table.render() + use + "\n"
            + "\(from) is marked moved: a run, submit or tick still pointed at it writes nothing there and "
            + "says where the store went\n"
    }

    // SQLite only: the copy starts from the workspace's SQLite file; PostgreSQL is its target, in either pass.
    @Test(.sqliteOnly) func everyTableSurvivesTheTripToPostgreSQLAndBack() throws {
        let workspace = try Self.populatedWorkspace()
        let file = workspace.root.appendingPathComponent("cache/offpeak.sqlite")
        let original = try Self.sqliteRows(file)
        for table in Self.tables where !Self.sparse.contains(table) {
            #expect(original[table]?.isEmpty == false, "the workspace has no rows in \(table)")
        }

        // SQLite → PostgreSQL.
        let urlB = try Self.cluster.makeDatabase()
        let shownB = try PostgresURL.parse(urlB, defaultUser: "nobody").description
        let toB = try Self.copy(workspace, to: urlB)
        #expect(toB.status == 0, "\(toB.stderr)")
        let counts = original.mapValues(\.count)
        let endpoint = "\(Self.cluster.host):\(Self.cluster.port)"
        #expect(
            toB.stdout
                == Self.expected(
                    from: "the SQLite store at \(file.path)",
                    to: "the PostgreSQL store at \(endpoint) database '\(Self.database(urlB))'",
                    counts: counts,
                    use: "to use it: store: \(shownB) in offpeak.yaml, or OFFPEAK_STORE=\(shownB)"))
        let copiedB = try Self.postgresRows(urlB)
        #expect(copiedB.mapValues(\.count) == counts)

        // PostgreSQL → SQLite, into a second workspace's file: the same rows as the first's.
        let second = try TemporaryWorkspace()
        let fileC = second.root.appendingPathComponent("cache/offpeak.sqlite")
        let toC = try Self.copy(second, to: "sqlite", store: urlB)
        #expect(toC.status == 0, "\(toC.stderr)")
        #expect(
            toC.stdout
                == Self.expected(
                    from: "the PostgreSQL store at \(endpoint) database '\(Self.database(urlB))'",
                    to: "the SQLite store at \(fileC.path)", counts: counts,
                    use:
                        "to use it: remove store: from offpeak.yaml (or write store: sqlite) and unset OFFPEAK_STORE"
                ))
        let roundTrip = try Self.sqliteRows(fileC)
        for table in Self.tables { #expect(roundTrip[table] == original[table], "table \(table)") }
        let permissions =
            try FileManager.default.attributesOfItem(atPath: fileC.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600, "the copy is readable by its owner only")

        // And that file → PostgreSQL again: the same rows as the first PostgreSQL copy.
        let urlD = try Self.cluster.makeDatabase()
        #expect(try Self.copy(second, to: urlD).status == 0)
        let copiedD = try Self.postgresRows(urlD)
        for table in Self.tables { #expect(copiedD[table] == copiedB[table], "table \(table)") }
        // Ids go on after the copied ones.
        let next = try Self.cluster.psql(
            "SELECT nextval(pg_get_serial_sequence('ledger', 'id')) > max(id) FROM ledger",
            database: Self.database(urlD))
        #expect(next.trimmingCharacters(in: .whitespacesAndNewlines) == "t")
    }

    // SQLite only: copies from (and refuses over) the workspace's SQLite file; PostgreSQL is the target.
    @Test(.sqliteOnly) func aCopyIntoAStoreThatHoldsDataOrOverAFileIsRefusedAndChangesNothing() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 2)
        #expect(try workspace.offpeak(["run", "docs"]).status == 0)
        let file = workspace.root.appendingPathComponent("cache/offpeak.sqlite")
        let url = try Self.cluster.makeDatabase()
        #expect(try Self.copy(workspace, to: url).status == 0)
        let before = try Self.postgresRows(url)

        let again = try Self.copy(workspace, to: url)
        #expect(again.status == 64)
        #expect(
            again.stderr
                == "offpeak: the PostgreSQL store at \(Self.cluster.host):\(Self.cluster.port) database "
                + "'\(Self.database(url))' already holds offpeak's rows (table runs); copy into an empty store\n"
        )
        #expect(try Self.postgresRows(url) == before)

        let back = try Self.copy(workspace, to: "sqlite", store: url)
        #expect(back.status == 64)
        #expect(
            back.stderr
                == "offpeak: \(file.path) exists and may hold work the copy's source does not; "
                + "move it away, then copy again\n")
        let leftovers = try FileManager.default.contentsOfDirectory(
            atPath: file.deletingLastPathComponent().path)
        #expect(!leftovers.contains { $0.contains("copying") })

        let same = try Self.copy(workspace, to: "sqlite")
        #expect(same.status == 64)
        #expect(same.stderr == "offpeak: the workspace's store is already sqlite; nothing to copy\n")
        let bad = try Self.copy(workspace, to: "mysql://x")
        #expect(bad.status == 64)
        #expect(
            bad.stderr
                == "offpeak: --to: expected 'sqlite' or a postgresql://USER@HOST:PORT/DATABASE URL\n")
    }

    /// Issue 46, item 2: a `submit` streaming lines while the store is copied away loses nothing.
    /// Every id it printed is in the copy; it stops with the old store's refusal, exit 78, at its
    /// first write after the copy; and from then on a `submit` or `run` to the old store is refused
    /// before it writes, saying where the store went, while `status` still reads it. Before, ids
    /// `submit` printed during the copy were in neither store and later submits were accepted.
    @Test(.sqliteOnly) func aSubmitRacingACopyLosesNothingAndTheOldStoreTakesNoMoreWrites() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write(
            "jobs/inbox.yaml", "kind: prompt\nqueue: true\ntemplate: \"{{item}}\"\nmax_tokens: 60\n")
        let file = workspace.root.appendingPathComponent("cache/offpeak.sqlite")
        #expect(
            try workspace.offpeak(
                ["submit", "--job", "inbox"], stdin: #"{"id": "first", "vars": {"item": "one"}}"#
            ).status == 0)
        let url = try Self.cluster.makeDatabase()
        let shown = try PostgresURL.parse(url, defaultUser: "nobody").description

        // `submit` reads lines as they come: a line every millisecond or so, until the copy has
        // ended and a little after, so the copy lands mid-stream however slow the machine.
        let submit = Process()
        submit.executableURL = BuiltBinaries.offpeak
        submit.arguments = ["submit", "--job", "inbox", "--workspace", workspace.root.path]
        let (input, output, errors) = (Pipe(), Pipe(), Pipe())
        submit.standardInput = input
        submit.standardOutput = output
        submit.standardError = errors
        try submit.run()
        let copyEnded = Mutex(false)
        let written = Mutex(0)
        let writer = Thread {
            var (index, after) = (0, 0)
            while after < 400 {
                let line = Data(#"{"id": "c\#(index)", "vars": {"item": "question \#(index)"}}"#.utf8 + [10])
                guard (try? input.fileHandleForWriting.write(contentsOf: line)) != nil else { break }
                written.withLock { $0 += 1 }
                if copyEnded.withLock({ $0 }) { after += 1 }
                if index % 4 == 0 { Thread.sleep(forTimeInterval: 0.002) }
                index += 1
            }
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        // What `submit` prints, read as it comes; the copy starts once its first chunk is committed.
        let out = Mutex(Data())
        let reader = Thread {
            while case let data = output.fileHandleForReading.availableData, !data.isEmpty {
                out.withLock { $0.append(data) }
            }
        }
        reader.start()
        let deadline = Date() + 30
        while out.withLock({ $0.isEmpty }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let copy = try Self.copy(workspace, to: url)
        copyEnded.withLock { $0 = true }
        #expect(copy.status == 0, "\(copy.stderr)")
        submit.waitUntilExit()
        while writer.isExecuting { Thread.sleep(forTimeInterval: 0.01) }
        let lines = written.withLock { $0 }
        while reader.isExecuting { Thread.sleep(forTimeInterval: 0.01) }
        let printed = String(decoding: out.withLock { $0 }, as: UTF8.self).split(separator: "\n").map(
            String.init)
        let refusal = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)

        // The old store says where it went, in the words every write to it is now refused with.
        let sentence = try #require(
            try DatabaseQueue(path: file.path).read { db in
                try String.fetchOne(db, sql: "SELECT sentence FROM offpeak_moved")
            })
        #expect(sentence.hasPrefix("this store was moved to \(shown) by `offpeak store copy` at "))
        #expect(
            sentence.hasSuffix(
                " UTC; nothing is written here any more: to use it, store: \(shown) in offpeak.yaml, or "
                    + "OFFPEAK_STORE=\(shown)"))
        #expect(submit.terminationStatus == 78, "the copy ended before the submit: \(printed.count) ids")
        #expect(refusal == "offpeak: \(sentence)\n")
        #expect(printed.count > 0 && printed.count < lines, "the copy came mid-stream: \(printed.count)")
        let copied = Set(
            try Self.cluster.psql("SELECT id FROM requests", database: Self.database(url))
                .split(separator: "\n").map(String.init))
        #expect(printed.allSatisfy(copied.contains), "every id submit printed is in the copy")
        #expect(copied.count == printed.count + 1, "and nothing else but the first request")

        // Afterwards: refused before writing, at open; the old file is left as it was.
        let before = try Self.sqliteRows(file)
        let late = try workspace.offpeak(
            ["submit", "--job", "inbox"], stdin: #"{"id": "late", "vars": {"item": "two"}}"#)
        #expect(late.status == 78)
        #expect(late.stdout == "")
        #expect(late.stderr == "offpeak: \(sentence)\n")
        let run = try workspace.offpeak(["run", "inbox"])
        #expect(run.status == 78 && run.stderr == "offpeak: \(sentence)\n")
        #expect(try Self.sqliteRows(file) == before)
        #expect(try workspace.offpeak(["status"]).status == 0, "reading commands still read it")
        // And through the new store, the work goes on.
        var environment: [String: String?] = Self.cluster.environment.mapValues { $0 }
        environment[StoreLocation.variable] = url
        let resumed = try workspace.offpeak(
            ["submit", "--job", "inbox"], environment: environment,
            stdin: #"{"id": "late", "vars": {"item": "two"}}"#)
        #expect(resumed.status == 0, "\(resumed.stderr)")
    }
}
