import Foundation
import OffpeakTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Intake through the built binaries (issue 10, items 5-9): spool folders take regular files of the
/// workspace only, report what they leave once, start no empty runs, and no id or file name wedges
/// a job. Serialized: each test counts the sim's calls.
@Suite(.ownThreads, .serialized) struct SpoolIntakeTests {
    static let marker = "OUTSIDE-MARKER-51c2"
    static let sysfs = SwitchableSysfs.fixtures.appendingPathComponent("ac-wifi").path

    /// The queue workspace of `TickTests` plus the queue job `linked`, and a folder outside it
    /// holding the marker.
    static func workspace(_ sim: SimProcess) throws -> (TemporaryWorkspace, TemporaryWorkspace) {
        let workspace = try TickTests.queueWorkspace(sim)
        try workspace.write(
            "jobs/linked.yaml", "kind: prompt\nqueue: true\ntemplate: \"{{item}}\"\nmax_tokens: 60\n")
        let outside = try TemporaryWorkspace()
        try outside.write("secret.txt", "\(marker) is private. Nobody may read it.")
        try outside.write("inbox/q.txt", "\(marker) through a linked folder.")
        return (workspace, outside)
    }

    static func link(_ workspace: TemporaryWorkspace, _ path: String, to target: URL) throws {
        try FileManager.default.createDirectory(
            at: workspace.root.appendingPathComponent(path).deletingLastPathComponent(),
            withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: workspace.root.appendingPathComponent(path), withDestinationURL: target)
    }

    /// Links (to a file, to a folder, and as the job's spool folder), a folder and a named pipe: the
    /// first tick says what it leaves, in a word each, sends nothing and starts no run; later ticks
    /// have nothing to do; `queue` lists each entry with why until it is gone. Before: the linked
    /// file was sent, the pipe hung the tick, and every tick started an empty run.
    @Test func ticksTakeNothingButRegularFilesAndReportTheRestOnce() throws {
        let sim = try SimProcess()
        let (workspace, outside) = try Self.workspace(sim)
        try Self.link(workspace, "spool/inbox/x.txt", to: outside.root.appendingPathComponent("secret.txt"))
        try Self.link(workspace, "spool/inbox/dirlink", to: outside.root)
        try Self.link(workspace, "spool/linked", to: outside.root.appendingPathComponent("inbox"))
        try FileManager.default.createDirectory(
            at: workspace.root.appendingPathComponent("spool/inbox/sub"), withIntermediateDirectories: true)
        #expect(mkfifo(workspace.root.appendingPathComponent("spool/inbox/pipe").path, 0o644) == 0)

        let first = try workspace.offpeak(["tick"], timeout: 30)
        let listed = " (`offpeak queue` lists it until it is gone)\n"
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stdout
                == "warning: spool/inbox/dirlink: a symbolic link; offpeak takes only regular files and never "
                + "follows a link" + listed
                + "warning: spool/inbox/pipe: a named pipe; offpeak takes only regular files" + listed
                + "warning: spool/inbox/sub: a folder; offpeak takes only regular files" + listed
                + "warning: spool/inbox/x.txt: a symbolic link; offpeak takes only regular files and never "
                + "follows a link" + listed
                + "warning: spool/linked: a symbolic link; offpeak reads spool folders only inside the "
                + "workspace, never through a link" + listed
                + "nothing to do\n")
        #expect(first.stderr == "")
        for _ in 1...2 {
            let again = try workspace.offpeak(["tick"], timeout: 30)
            #expect(again.status == 0 && again.stdout == "nothing to do\n" && again.stderr == "")
        }
        #expect(try TickTests.calls(sim) == 0, "nothing was sent")
        #expect(try TickTests.runs(workspace).isEmpty, "no empty runs")
        #expect(workspace.read("out/inbox/index.json") == nil)
        #expect(outside.read("inbox/q.txt") != nil, "nothing moved out of the linked folder")

        let json = try TickTests.json(
            try workspace.offpeak(["queue", "--json", "--sysfs-root", Self.sysfs]).stdout)
        let entries = try #require(json["not_taken"] as? [[String: Any]])
        #expect(
            entries.compactMap { $0["entry"] as? String } == [
                "spool/inbox/dirlink", "spool/inbox/pipe", "spool/inbox/sub", "spool/inbox/x.txt",
                "spool/linked",
            ])
        // Each entry's first sighting, which a loaded machine may put in the next second.
        let since = entries.map { $0["since"] as? String ?? "" }
        try #require(since.count == 5)
        let queue = try workspace.offpeak(["queue", "--sysfs-root", Self.sysfs])
        #expect(
            queue.stdout == """
                now: on AC (54 %); online, unmetered (wlan0)
                deferred: nothing

                not taken from spool folders (remove them, or make them regular files):
                JOB     ENTRY                SINCE                 WHY
                inbox   spool/inbox/dirlink  \(since[0])  a symbolic link; offpeak takes only regular files and never follows a link
                inbox   spool/inbox/pipe     \(since[1])  a named pipe; offpeak takes only regular files
                inbox   spool/inbox/sub      \(since[2])  a folder; offpeak takes only regular files
                inbox   spool/inbox/x.txt    \(since[3])  a symbolic link; offpeak takes only regular files and never follows a link
                linked  spool/linked         \(since[4])  a symbolic link; offpeak reads spool folders only inside the workspace, never through a link

                """)

        // Gone from the folder, gone from the queue; a regular file is taken as ever.
        try FileManager.default.removeItem(at: workspace.root.appendingPathComponent("spool/inbox/sub"))
        try workspace.write("spool/inbox/q.txt", "What is a tide? The sea rises.")
        let taken = try workspace.offpeak(["tick"], timeout: 30)
        #expect(
            taken.stdout == "inbox [spool]: job inbox: 1 of 1 item answered (1 now)\n", "\(taken.stderr)")
        let after = try TickTests.json(
            try workspace.offpeak(["queue", "--json", "--sysfs-root", Self.sysfs]).stdout)
        #expect((after["not_taken"] as? [[String: Any]])?.count == 4)
        #expect(try TickTests.calls(sim) == 1)
        #expect(workspace.read("out/inbox/q.md")?.hasPrefix("Answer: What is a tide?") == true)
    }

    /// A file named `taken` is a request like any other (it wedged the job with exit 74), and the
    /// `taken/` folder an earlier version made stays as it was, unreported.
    @Test func aFileNamedTakenIsAnsweredAndTheEarlierTakenFolderStays() throws {
        let sim = try SimProcess()
        let (workspace, _) = try Self.workspace(sim)
        try workspace.write("spool/inbox/taken/old.txt", "Answered by an earlier version.")
        try workspace.write("spool/inbox/q.txt", "What is a tide? The sea rises.")
        try workspace.write("spool/linked/taken", "Is taken a name? It is one.")
        let tick = try workspace.offpeak(["tick"], timeout: 30)
        #expect(tick.status == 0, "\(tick.stderr)")
        #expect(
            tick.stdout
                == "inbox [spool]: job inbox: 1 of 1 item answered (1 now)\n"
                + "linked [spool]: job linked: 1 of 1 item answered (1 now)\n")
        #expect(workspace.read("out/linked/taken.md")?.hasPrefix("Answer: Is taken a name?") == true)
        #expect(workspace.read("spool/linked/.taken/taken") == "Is taken a name? It is one.")
        #expect(workspace.read("spool/inbox/taken/old.txt") == "Answered by an earlier version.")
        #expect(workspace.read("spool/inbox/.taken/q.txt") != nil)
        #expect(try workspace.offpeak(["tick"]).stdout == "nothing to do\n")
    }

    /// Ids far too long for a file name, from submit and from a spool file's name: the outputs and
    /// the index are written (before, every tick exited 74 and wrote nothing again).
    @Test func longIdsGetBoundedFileNamesAndTheIndexSaysWhich() throws {
        let sim = try SimProcess()
        let (workspace, _) = try Self.workspace(sim)
        let submitted = String(repeating: "L", count: 300)
        let spooled = String(repeating: "S", count: 246) + ".txt"
        try workspace.write("spool/inbox/\(spooled)", "What is a spool? A reel.")
        let submit = try workspace.offpeak(
            ["submit", "--job", "inbox"],
            stdin: #"{"id": "\#(submitted)", "vars": {"item": "What is long? This."}}"#)
        #expect(submit.status == 0, "\(submit.stderr)")
        let tick = try workspace.offpeak(["tick"], timeout: 30)
        #expect(tick.status == 0, "\(tick.stdout)\(tick.stderr)")
        #expect(tick.stdout == "inbox [resume]: job inbox: 2 of 2 items answered (2 now)\n")
        let index = try TickTests.json(try #require(workspace.read("out/inbox/index.json")))
        let items = try #require(index["items"] as? [[String: Any]])
        #expect(items.compactMap { $0["id"] as? String } == [submitted, spooled])
        for item in items {
            let file = try #require(item["file"] as? String)
            #expect(file.utf8.count <= 240)
            #expect(workspace.read("out/inbox/\(file)")?.hasPrefix("Answer: What is") == true, "\(file)")
        }
        #expect(try workspace.offpeak(["tick"]).stdout == "nothing to do\n")
    }

    /// Control characters in ids are refused at their line (a NUL cut "a\0b" to "a"), a repeated id
    /// names its line and the first, and the refusals come in line order.
    @Test func submitRefusesControlCharactersAndRepeatedIdsAtTheirLines() throws {
        let (workspace, _) = try Self.workspace(try SimProcess())
        let lines =
            [
                #"{"id": "a\u0000b", "vars": {"item": "x"}}"#, #"{"id": "a", "vars": {"item": "y"}}"#,
                #"{"id": "a", "vars": {"item": "z"}}"#, #"{"id": "c\u001b[2J", "vars": {"item": "w"}}"#,
            ].map { Data($0.utf8) } + [
                Data(#"{"id": "caf"#.utf8) + Data([0xFF]) + Data(#"", "vars": {}}"#.utf8)
            ]
        let result = try CommandResult.run(
            BuiltBinaries.offpeak, ["submit", "--job", "inbox", "--workspace", workspace.root.path],
            environment: try workspace.storeEnvironment(),
            stdin: Data(lines.joined(separator: Data("\n".utf8))))
        #expect(result.status == 65)
        #expect(result.stdout.split(separator: "\n").count == 1)
        #expect(
            result.stderr == """
                offpeak: stdin:1: id: control character U+0000 at position 2; an id is printable text
                offpeak: stdin:3: id: "a" was already given at stdin:2
                offpeak: stdin:4: id: control character U+001B at position 2; an id is printable text
                offpeak: stdin:5:12: not valid UTF-8 (byte 0xFF)

                """)
        let run = try #require(try TickTests.runs(workspace).first?["id"] as? String)
        let again = try workspace.offpeak(
            ["submit", "--job", "inbox"], stdin: "\n" + #"{"id": "a", "vars": {"item": "y"}}"#)
        #expect(again.stderr == "offpeak: stdin:2: id: \"a\" was already submitted to run \(run)\n")
        #expect(try TickTests.runs(workspace).first?["items_total"] as? Int == 1)
    }

    /// A spool file whose every line is refused says so once and starts no run (before: an empty
    /// run, and `index.json` rewritten with no items).
    @Test func aSpoolFileWhoseLinesAreAllRefusedStartsNoRun() throws {
        let sim = try SimProcess()
        let (workspace, _) = try Self.workspace(sim)
        try workspace.write(
            "spool/inbox/bad.jsonl", #"{"id": "x\u0000", "vars": {"item": "q"}}"# + "\nnot json\n")
        let tick = try workspace.offpeak(["tick"], timeout: 30)
        #expect(tick.status == 0)
        #expect(
            tick.stdout == """
                warning: spool/inbox/bad.jsonl:1: id: control character U+0000 at position 2; an id is printable text
                warning: spool/inbox/bad.jsonl:2: expected one JSON object per line, like {"vars": {"item": "..."}}
                nothing to do

                """)
        #expect(try TickTests.runs(workspace).isEmpty)
        #expect(workspace.read("out/inbox/index.json") == nil)
        #expect(try workspace.offpeak(["tick"]).stdout == "nothing to do\n")
    }
}
