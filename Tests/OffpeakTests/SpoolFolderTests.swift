import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

#if canImport(Glibc)
import Glibc
#endif

/// `SpoolFolder` on real folders and a real store (issue 10, items 5-7 and 9): what it takes, what
/// it leaves and reports once, and that nothing is read outside the workspace.
@Suite(.ownThreads) struct SpoolFolderTests {
    /// A workspace with the queue job `inbox`, its store, and a file outside it holding a marker.
    final class Inbox: @unchecked Sendable {
        let workspace: TemporaryWorkspace
        let outside: TemporaryWorkspace
        let store: Store
        let spec: JobSpec
        let queue: SubmissionQueue
        static let marker = "OUTSIDE-MARKER-7f3a"

        init() throws {
            workspace = try TemporaryWorkspace()
            outside = try TemporaryWorkspace()
            try outside.write("secret.txt", "\(Self.marker) is private.")
            try outside.write("folder/inside.txt", "\(Self.marker) in a folder.")
            try workspace.write("offpeak.yaml", "provider: sim\nbase_url: http://127.0.0.1:9\n")
            try workspace.write("jobs/inbox.yaml", "kind: prompt\nqueue: true\ntemplate: \"{{item}}\"\n")
            try FileManager.default.createDirectory(
                at: workspace.root.appendingPathComponent("spool/inbox"), withIntermediateDirectories: true)
            let root = Workspace(root: workspace.root)
            store = try Store.open(root)
            spec = try JobSpecParser.load(
                path: workspace.root.appendingPathComponent("jobs/inbox.yaml"), workspace: workspace.root)
            queue = SubmissionQueue(
                store: store, spec: spec, config: try WorkspaceConfigParser.load(workspace: workspace.root))
        }

        func take() throws -> SpoolFolder.Taken {
            try SpoolFolder(workspace: Workspace(root: workspace.root), job: "inbox").take(
                into: queue, spec: spec)
        }

        func path(_ relative: String) -> String { workspace.root.appendingPathComponent(relative).path }

        func link(_ relative: String, to target: String) throws {
            try FileManager.default.createSymbolicLink(atPath: path(relative), withDestinationPath: target)
        }

        /// Every payload in the store, to look for the marker.
        func payloads() throws -> String {
            try store.sqlite.read { db in try String.fetchAll(db, sql: "SELECT payload FROM requests") }
                .joined()
        }

        func exists(_ relative: String) -> Bool {
            var info = stat()
            return lstat(path(relative), &info) == 0
        }
    }

    @Test func aLinkToAFileOutsideTheWorkspaceIsNeitherReadNorTaken() throws {
        let inbox = try Inbox()
        try inbox.link("spool/inbox/x.txt", to: inbox.outside.root.appendingPathComponent("secret.txt").path)
        try inbox.link("spool/inbox/y.txt", to: "../../../\(inbox.outside.root.lastPathComponent)/secret.txt")
        try inbox.workspace.write("spool/inbox/z.txt", "What is a tide? The sea rises.")
        let taken = try inbox.take()
        #expect(taken.added.count == 1, "only the regular file")
        #expect(try !inbox.payloads().contains(Inbox.marker))
        #expect(try inbox.payloads().contains("What is a tide?"))
        #expect(
            inbox.exists("spool/inbox/x.txt") && inbox.exists("spool/inbox/y.txt"),
            "links stay where they are")
        #expect(inbox.exists("spool/inbox/.taken/z.txt"))
    }

    @Test func spoolFoldersThatAreLinksAreNotRead() throws {
        let inbox = try Inbox()
        try FileManager.default.removeItem(atPath: inbox.path("spool/inbox"))
        try inbox.link("spool/inbox", to: inbox.outside.root.appendingPathComponent("folder").path)
        var taken = try inbox.take()
        #expect(taken.added.isEmpty)
        #expect(
            taken.refused.map(\.description) == [
                "spool/inbox: a symbolic link; offpeak reads spool folders only inside the workspace, never "
                    + "through a link (`offpeak queue` lists it until it is gone)"
            ])
        #expect(inbox.outside.read("folder/inside.txt") != nil, "nothing moved out of the linked folder")
        // `spool` itself a link.
        try FileManager.default.removeItem(atPath: inbox.path("spool"))
        try inbox.link("spool", to: inbox.outside.root.path)
        try inbox.outside.write("inbox/q.txt", "\(Inbox.marker) through spool.")
        taken = try inbox.take()
        #expect(taken.added.isEmpty)
        #expect(taken.refused.first?.location == "spool")
        #expect(try !inbox.payloads().contains(Inbox.marker))
        #expect(inbox.outside.read("inbox/q.txt") != nil, "nothing moved out of the other folder")
    }

    /// A folder, a named pipe (which blocks whoever opens it to read), a socket, a link to a folder
    /// and names that cannot be ids stay; each is reported by the first pass only, and forgotten
    /// once it is gone.
    @Test func entriesThatAreNotRegularFilesStayAndAreReportedOnce() throws {
        let inbox = try Inbox()
        try FileManager.default.createDirectory(
            atPath: inbox.path("spool/inbox/sub"), withIntermediateDirectories: true)
        #expect(mkfifo(inbox.path("spool/inbox/pipe"), 0o644) == 0)
        try Self.bindSocket(at: inbox.path("spool/inbox/sock"))
        try inbox.link("spool/inbox/dirlink", to: inbox.outside.root.path)
        try inbox.workspace.write("spool/inbox/line\nbreak.txt", "A question? Yes.")
        let first = try inbox.take()
        #expect(first.added.isEmpty)
        #expect(
            first.refused.map(\.description)
                == [
                    "spool/inbox/dirlink: a symbolic link; offpeak takes only regular files and never follows a link",
                    "spool/inbox/line\\nbreak.txt: its name, the request's id, has a control character U+000A at "
                        + "position 5; an id is printable text",
                    "spool/inbox/pipe: a named pipe; offpeak takes only regular files",
                    "spool/inbox/sock: a socket; offpeak takes only regular files",
                    "spool/inbox/sub: a folder; offpeak takes only regular files",
                ].map { $0 + " (`offpeak queue` lists it until it is gone)" })
        #expect(try inbox.store.runs.runs().isEmpty, "nothing to take makes no run")
        let second = try inbox.take()
        #expect(second.added.isEmpty && second.refused.isEmpty, "\(second.refused)")
        #expect(try inbox.store.schedules.notTaken().map(\.entry).count == 5)
        try FileManager.default.removeItem(atPath: inbox.path("spool/inbox/sub"))
        _ = try inbox.take()
        #expect(try !inbox.store.schedules.notTaken().map(\.entry).contains("spool/inbox/sub"))
        #expect(try inbox.store.runs.runs().isEmpty)
        #expect(inbox.exists("spool/inbox/pipe") && inbox.exists("spool/inbox/dirlink"))
    }

    /// `taken` is an ordinary name now; the `taken/` folder earlier versions made is left alone,
    /// with its files, and not reported.
    @Test func aFileNamedTakenIsTakenAndTheEarlierTakenFolderIsKept() throws {
        let inbox = try Inbox()
        try inbox.workspace.write("spool/inbox/taken", "Is taken a name? It is.")
        let taken = try inbox.take()
        #expect(taken.added.count == 1 && taken.refused.isEmpty, "\(taken.refused)")
        #expect(inbox.workspace.read("spool/inbox/.taken/taken") == "Is taken a name? It is.")

        let earlier = try Inbox()
        try earlier.workspace.write("spool/inbox/taken/old.txt", "Answered long ago.")
        try earlier.workspace.write("spool/inbox/new.txt", "A new question? Yes.")
        let next = try earlier.take()
        #expect(next.added.count == 1 && next.refused.isEmpty, "\(next.refused)")
        #expect(earlier.workspace.read("spool/inbox/taken/old.txt") == "Answered long ago.")
        #expect(try earlier.store.schedules.notTaken().isEmpty)
    }

    /// A `.taken` that is not a folder stops the taking, once and with a word, not with an error on
    /// every pass; the file waits and is taken once `.taken` is put right.
    @Test func aTakenFolderThatIsALinkStopsTakingWithoutAnError() throws {
        let inbox = try Inbox()
        try inbox.link("spool/inbox/.taken", to: inbox.outside.root.path)
        try inbox.workspace.write("spool/inbox/q.txt", "A question? Yes.")
        let first = try inbox.take()
        #expect(first.added.isEmpty)
        #expect(first.refused.map(\.location) == ["spool/inbox/.taken"])
        #expect(try inbox.take().refused.isEmpty)
        #expect(try inbox.store.runs.runs().isEmpty)
        try FileManager.default.removeItem(atPath: inbox.path("spool/inbox/.taken"))
        #expect(try inbox.take().added.count == 1)
        #expect(inbox.outside.read("q.txt") == nil)
    }

    /// Lines of a spool file are refused with the file and line, ids with control characters and
    /// repeated ids included; a file whose lines are all refused starts no run.
    @Test func aFileThatIsNotTextIsRefusedAtItsFirstBadByte() throws {
        let inbox = try Inbox()
        try inbox.workspace.write("spool/inbox/ok.txt", "\u{FEFF}plain text\n")
        let root = inbox.workspace.root
        try Data("line one\nsecond \u{E9}t\u{E9}".utf8.map { $0 == 0xC3 ? 0xE9 : $0 }.filter { $0 != 0xA9 })
            .write(to: root.appendingPathComponent("spool/inbox/latin1.txt"))
        try Data([0x68, 0x00, 0x69, 0x00]).write(to: root.appendingPathComponent("spool/inbox/utf16.txt"))
        let taken = try inbox.take()
        #expect(taken.added.count == 1)
        #expect(
            taken.refused.map(\.description) == [
                "spool/inbox/latin1.txt:2:8: not valid UTF-8: byte 0xE9 does not belong to a UTF-8 character; "
                    + "save the file as UTF-8",
                "spool/inbox/utf16.txt:1:1: the file is UTF-16 text (every other byte is NUL, little-endian), "
                    + "not UTF-8; save it as UTF-8",
            ])
    }

    @Test func refusedLinesNameTheirFileAndLineAndMakeNoRun() throws {
        let inbox = try Inbox()
        try inbox.workspace.write(
            "spool/inbox/a.jsonl",
            #"{"id": "x\u0000y", "vars": {"item": "q"}}"# + "\n"
                + #"{"id": "x\u001b[2J", "vars": {"item": "q"}}"#
                + "\n\n" + #"{"id": true, "vars": {"item": "q"}}"# + "\n")
        let first = try inbox.take()
        #expect(first.added.isEmpty)
        #expect(
            first.refused.map(\.description) == [
                "spool/inbox/a.jsonl:1: id: control character U+0000 at position 2; an id is printable text",
                "spool/inbox/a.jsonl:2: id: control character U+001B at position 2; an id is printable text",
                "spool/inbox/a.jsonl:4: id: expected a string or a whole number",
            ])
        #expect(try inbox.store.runs.runs().isEmpty, "no empty run")
        try inbox.workspace.write(
            "spool/inbox/b.jsonl",
            #"{"id": "x", "vars": {"item": "q1"}}"# + "\n" + #"{"id": "x", "vars": {"item": "q2"}}"# + "\n")
        let second = try inbox.take()
        #expect(second.added.count == 1)
        #expect(
            second.refused.map(\.description) == [
                #"spool/inbox/b.jsonl:2: id: "x" was already given at spool/inbox/b.jsonl:1"#
            ])
    }

    static func bindSocket(at path: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0, "bind \(path)")
    }
}
