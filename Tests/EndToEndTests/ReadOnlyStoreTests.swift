import Foundation
import OffpeakTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A store this user cannot write: someone else's workspace, a read-only mount (issue 10, item 14).
/// The reports read it; commands that write refuse, saying it is read-only; nothing is written.
@Suite(.ownThreads, .serialized) struct ReadOnlyStoreTests {
    /// The workspace's `cache/` made read-only for the user the commands run as. Root passes file
    /// modes, so as root (CI) the commands run as `nobody` (setpriv), `cache/` given to it with its
    /// write bits off; otherwise as this user, with the write bits off. What the commands read
    /// besides the workspace (the binary, the sysfs fixture) are copies `OtherUser` keeps where
    /// `nobody` can reach them: the checkout may be in a folder only its owner can enter.
    final class Reader {
        let workspace: TemporaryWorkspace
        let user: OtherUser
        /// A copy of the `ac-wifi` sysfs fixture the reader can read.
        let fixture: String
        static var isRoot: Bool { OtherUser.isRoot }

        init(_ workspace: TemporaryWorkspace) throws {
            self.workspace = workspace
            user = try OtherUser()
            fixture = try user.copy(SwitchableSysfs.fixtures.appendingPathComponent("ac-wifi"), as: "ac-wifi")
                .path
        }

        deinit {
            let cache = workspace.root.appendingPathComponent("cache")
            try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: cache.path)
        }

        /// Takes away write access to `cache/` and what is in it.
        func lock() throws {
            let cache = workspace.root.appendingPathComponent("cache")
            var attributes: [FileAttributeKey: Any] = [:]
            if Self.isRoot { attributes = [.ownerAccountID: 65534, .groupOwnerAccountID: 65534] }
            for name in try FileManager.default.contentsOfDirectory(atPath: cache.path) {
                attributes[.posixPermissions] = 0o400
                try FileManager.default.setAttributes(
                    attributes, ofItemAtPath: cache.appendingPathComponent(name).path)
            }
            attributes[.posixPermissions] = 0o500
            try FileManager.default.setAttributes(attributes, ofItemAtPath: cache.path)
        }

        func offpeak(_ arguments: [String], stdin: String? = nil) throws -> CommandResult {
            try user.offpeak(
                arguments + ["--workspace", workspace.root.path], stdin: stdin.map { Data($0.utf8) })
        }
    }

    static func inbox(_ sim: SimProcess) throws -> (TemporaryWorkspace, id: String) {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write(
            "jobs/inbox.yaml",
            "kind: prompt\nqueue: true\ntemplate: \"{{item}}\"\nmax_tokens: 60\nbatching: off\n")
        let submitted = try workspace.offpeak(
            ["submit", "--job", "inbox"], stdin: #"{"id": "q1", "vars": {"item": "Why is the sky blue?"}}"#)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let ran = try workspace.offpeak(["run", "inbox"])
        #expect(ran.status == 0, "\(ran.stderr)")
        return (workspace, submitted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// What the owner sees, the reader sees; what would write is refused, and the store's files
    /// are as they were.
    // SQLite only: the SQLite file's modes; who may write a PostgreSQL store is the server's to say.
    @Test(.sqliteOnly) func reportsReadItAndCommandsThatWriteSaySoAndWriteNothing() throws {
        let sim = try SimProcess()
        let (workspace, id) = try Self.inbox(sim)
        let reader = try Reader(workspace)
        // `cache ls` as JSON: its table says "in 23 h" a second after "in 1 d".
        let reports = [
            ["status"], ["status", "--json"], ["queue", "--sysfs-root", reader.fixture], ["costs"],
            ["cache", "stats"], ["cache", "ls", "--json"], ["result", id], ["batches", "--all"],
        ]
        let owner = try reports.map { try workspace.offpeak($0) }
        #expect(owner[2].stdout == "now: on AC (54 %); online, unmetered (wlan0)\ndeferred: nothing\n")
        let files = workspace.snapshot("cache")
        try reader.lock()
        for (command, expected) in zip(reports, owner) {
            let read = try reader.offpeak(command)
            #expect(read.status == expected.status, "\(command): \(read.stderr)")
            #expect(read.stdout == expected.stdout, "\(command)")
            #expect(read.stderr == expected.stderr, "\(command)")
        }
        let cache = workspace.root.appendingPathComponent("cache").path
        let refusal =
            "offpeak: \(cache) is read-only: Permission denied; this command writes to the store "
            + "(status, batches, queue, costs, cache stats and result only read it, and work)\n"
        for (command, stdin) in [
            (["run", "inbox"], nil), (["tick"], nil), (["cache", "purge", "--expired"], nil),
            (["submit", "--job", "inbox"], #"{"id": "q2", "vars": {"item": "Why?"}}"#),
        ] {
            let refused = try reader.offpeak(command, stdin: stdin)
            #expect(refused.status == 74, "\(command): \(refused.stdout)")
            #expect(refused.stderr == refusal, "\(command)")
        }
        #expect(workspace.snapshot("cache") == files, "nothing written, created or removed")
    }

    /// While the owner's run writes (its log and index beside the store), the reader sees the run
    /// as it is, through them.
    @Test func aReaderSeesARunInProgressThroughItsLog() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "2500"])
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 2)
        _ = try workspace.offpeak(["status"])  // the store exists before the run starts
        let reader = try Reader(workspace)
        let run = try Spawned(BuiltBinaries.offpeak, ["run", "docs", "--workspace", workspace.root.path])
        let deadline = Date() + 30
        while workspace.read("cache/offpeak.sqlite-shm") == nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        try InFlightStopTests.waitForCallsInFlight(sim, 1)  // the run row is committed, a call in flight
        try reader.lock()
        let status = try reader.offpeak(["status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let runs = try #require(report["runs"] as? [[String: Any]])
        #expect(runs.map { "\($0["job"] ?? "") \($0["state"] ?? "")" } == ["docs running"])
        let finished = try #require(run.wait(timeout: 60))
        #expect(finished.status == 0, "\(finished.stderr)")
    }
}
