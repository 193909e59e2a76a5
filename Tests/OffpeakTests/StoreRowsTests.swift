import Foundation
import GRDB
import OffpeakTestSupport
import Synchronization
import Testing

@testable import Offpeak

/// Rows the store cannot read back, and a store file that was emptied (issue 10, items 2 and 15),
/// on a real store file.
@Suite(.ownThreads) struct StoreRowsTests {
    /// What `deadline: 3000000d` made (counted here from 2001): a date GRDB writes as
    /// "10214-09-22 00:00:00.000", then cannot read back.
    static let pastYear9999 = Date(timeIntervalSinceReferenceDate: 3_000_000 * 86_400)

    static func openRun(_ id: String, job: String, createdAt: Date) -> RunRecord {
        var run = StoreTests.run(id, job: job, state: .waiting)
        run.createdAt = createdAt
        return run
    }

    @Test func aDateTheStoreCannotReadBackIsNeverWritten() throws {
        let workspace = try TemporaryWorkspace()
        let store = try StoreTests.store(workspace)
        var run = StoreTests.run("far-1", job: "far")
        run.deadlineAt = Self.pastYear9999
        let error = try #require(throws: OffpeakError.self) { try store.runs.insert(run: run, requests: []) }
        #expect(error.status == .dataError)
        #expect(
            error.description
                == "cannot store runs row far-1: deadline_at is in year 10214; the store holds dates from year 1 to 9999"
        )
        #expect(
            try store.runs.runRows().runs.isEmpty && store.runs.runRows().unreadable.isEmpty,
            "nothing was written")

        try store.runs.insert(run: StoreTests.run("far-2", job: "far"), requests: [])
        run = try #require(try store.runs.run(id: "far-2"))
        run.deadlineAt = Date(timeIntervalSince1970: .infinity)
        #expect(throws: OffpeakError.self) { try store.runs.update(run: run) }
        #expect(try store.runs.run(id: "far-2")?.deadlineAt == nil, "an update is refused the same way")
    }

    /// A run row written before the store refused such dates (the value bound as GRDB wrote it):
    /// lists leave it out and name it, the other runs are read, and the job's own run refuses.
    // SQLite only: GRDB's text dates past 9999 do not read back; PostgreSQL's timestamptz holds them.
    @Test(.sqliteOnly) func aRunRowThatDoesNotDecodeIsNamedAndTheOthersAreRead() throws {
        let workspace = try TemporaryWorkspace()
        let store = try StoreTests.store(workspace)
        let now = Date()
        for run in [
            Self.openRun("near-1", job: "near", createdAt: now - 20),
            Self.openRun("far-1", job: "far", createdAt: now - 10),
        ] {
            try store.runs.insert(run: run, requests: [StoreTests.request("a", run: run.id, position: 0)])
        }
        try store.sqlite.write { db in
            try db.execute(
                sql: "UPDATE runs SET deadline_at = ? WHERE id = 'far-1'", arguments: [Self.pastYear9999])
        }
        let stored = try store.sqlite.read { db in
            try String.fetchOne(db, sql: "SELECT deadline_at FROM runs WHERE id = 'far-1'")
        }
        let value = try #require(stored)
        #expect(value == "10214-09-22 00:00:00.000")

        let why = "deadline_at is \"\(value)\", not a date the store can read (years 1 to 9999)"
        let repair = "UPDATE runs SET deadline_at = NULL WHERE id = 'far-1'"
        for rows in [try store.runs.runRows(), try store.runs.resumableRunRows()] {
            #expect(rows.runs.map(\.id) == ["near-1"])
            #expect(rows.unreadable.map(\.id) == ["far-1"])
            #expect(rows.unreadable.map(\.job) == ["far"])
            #expect(rows.unreadable.map(\.why) == [why])
            #expect(rows.unreadable.map(\.repair) == [repair])
        }
        #expect(try store.runs.runs().map(\.id) == ["near-1"])
        #expect(try store.runs.resumableRuns().map(\.id) == ["near-1"])
        #expect(try store.runs.latestResumableRun(job: "near")?.id == "near-1")
        #expect(try store.runs.readableRun(id: "far-1") == nil)

        let message =
            "run far-1 of job far cannot be read: \(why); to repair it (a deadline past year 9999 is no "
            + "deadline), in the workspace: sqlite3 cache/offpeak.sqlite \"\(repair)\""
        let reads: [() throws -> RunRecord?] = [
            { try store.runs.latestResumableRun(job: "far") }, { try store.runs.run(id: "far-1") },
        ]
        for attempt in reads {
            let error = try #require(throws: OffpeakError.self) { _ = try attempt() }
            #expect(error.status == .ioError)
            #expect(error.description == message)
        }
        let report = try StatusReport.make(store: store)
        #expect(report.runs.map(\.id) == ["near-1"])
        #expect(report.unreadable.map(\.id) == ["far-1"])

        // The repair it names makes the row readable, meaning what it meant: no deadline.
        try store.sqlite.write { db in try db.execute(sql: repair) }
        #expect(try store.runs.runRows().runs.map(\.id) == ["far-1", "near-1"])
        #expect(try store.runs.latestResumableRun(job: "far")?.deadlineAt == nil)
    }

    // SQLite only: the SQLite file itself, emptied.
    @Test(.sqliteOnly) func anEmptiedStoreIsRefusedAndLeftAsItIs() throws {
        let workspace = try TemporaryWorkspace()
        let file = try workspace.write("cache/offpeak.sqlite", "")
        let error = try #require(throws: OffpeakError.self) { try StoreTests.store(workspace) }
        #expect(error.status == .ioError)
        #expect(
            error.description
                == "\(file.path) is empty (0 bytes): the store that was there (runs, queue, cache, ledger) is "
                + "gone; offpeak does not start a new one over it. To start afresh, remove the file "
                + "(and offpeak.sqlite-wal and offpeak.sqlite-shm, if there)")
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int == 0)
        #expect(throws: OffpeakError.self) { try SQLiteStore.openForReading(Workspace(root: workspace.root)) }

        try FileManager.default.removeItem(at: file)
        _ = try StoreTests.store(workspace)  // removed, as the message says: a new store
    }

    /// Openers racing on a new workspace (threads here; processes in `TickTests`) all get the one
    /// store, made once under its own name: none sees a file another has just created and
    /// takes it for an emptied store.
    // SQLite only: the SQLite file's creation under its own name.
    @Test(.sqliteOnly) func openersRacingOnANewWorkspaceAllGetTheStore() throws {
        for _ in 1...5 {
            let workspace = try TemporaryWorkspace()
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                do { _ = try StoreTests.store(workspace) } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            let names = try FileManager.default.contentsOfDirectory(
                atPath: workspace.root.appendingPathComponent("cache").path)
            #expect(!names.contains("offpeak.sqlite.new"), "\(names)")
        }
    }
}
