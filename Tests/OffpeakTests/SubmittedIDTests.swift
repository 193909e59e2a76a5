import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Submitted ids and lines (issue 10, item 9): no text is cut or repaired quietly, ids are printable
/// text, and every refusal names its line.
@Suite(.ownThreads) struct SubmittedIDTests {
    static func spec() throws -> JobSpec {
        let workspace = try TemporaryWorkspace()
        try workspace.write("jobs/inbox.yaml", "kind: prompt\nqueue: true\ntemplate: \"{{item}}\"\n")
        return try JobSpecParser.load(
            path: workspace.root.appendingPathComponent("jobs/inbox.yaml"), workspace: workspace.root)
    }

    static func refusal(_ line: String) throws -> String? {
        let spec = try spec()
        do {
            _ = try Submission.parse(line, location: "stdin:4", spec: spec)
            return nil
        } catch {
            return error.description
        }
    }

    /// C0 and C1 controls, DEL and the line separators: a NUL was cut by SQLite's binding ("a\0b"
    /// stored as "a"), the others garble what prints an id.
    @Test(arguments: [
        ("a\\u0000b", "U+0000 at position 2"), ("\\u0001", "U+0001 at position 1"),
        ("ab\\n", "U+000A at position 3"), ("a\\tb", "U+0009 at position 2"),
        ("\\u001b[31mred", "U+001B at position 1"), ("a\\u007f", "U+007F at position 2"),
        ("a\\u0085", "U+0085 at position 2"), ("a\\u2028b", "U+2028 at position 2"),
    ])
    func idsWithControlCharactersAreRefusedAtTheirLine(id: String, what: String) throws {
        #expect(
            try Self.refusal(#"{"id": "\#(id)", "vars": {"item": "x"}}"#)
                == "stdin:4: id: control character \(what); an id is printable text")
    }

    /// `true` is not the text "1", and `1.50` would be stored as "1.5": both refused; a whole number
    /// is its digits.
    @Test func idsThatAreNotTextAsWrittenAreRefused() throws {
        #expect(
            try Self.refusal(#"{"id": true, "vars": {"item": "x"}}"#)
                == "stdin:4: id: expected a string or a whole number")
        #expect(
            try Self.refusal(#"{"id": 1.50, "vars": {"item": "x"}}"#)
                == "stdin:4: id: expected a string or a whole number")
        #expect(
            try Submission.parse(
                #"{"id": 12345678901234567890, "vars": {"item": "x"}}"#, location: "l", spec: Self.spec()
            )
            .clientId == "12345678901234567890")
    }

    /// A line is taken as its bytes: one that is not UTF-8 is refused with its line and column,
    /// not repaired into U+FFFD.
    @Test func linesThatAreNotUTF8AreRefusedWithTheirColumn() throws {
        let spec = try Self.spec()
        let line = Array(#"{"id": "caf"#.utf8) + [0xE9] + Array(#"", "vars": {"item": "x"}}"#.utf8)
        do {
            _ = try Submission.parse(line: line, location: "stdin:3", spec: spec)
            Issue.record("a line that is not UTF-8 was taken")
        } catch {
            #expect(error.description == "stdin:3:12: not valid UTF-8 (byte 0xE9)")
        }
        #expect(try Submission.parse(line: Array("  \r".utf8), location: "stdin:4", spec: Self.spec()) == nil)
    }

    /// An id given twice is refused at its own line, naming the first; given again later, naming the
    /// run that has it. Ids stay whole in the store.
    @Test func repeatedIdsAreRefusedAtTheirOwnLine() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\n")
        let store = try workspace.openStore()
        let spec = try Self.spec()
        let queue = SubmissionQueue(
            store: store, spec: spec, config: try WorkspaceConfigParser.load(workspace: workspace.root))
        let long = String(repeating: "é", count: 300) + "\u{1F600}"
        let lines = [
            #"{"id": "a", "vars": {"item": "one"}}"#, #"{"id": "a", "vars": {"item": "two"}}"#,
            #"{"id": "\#(long)", "vars": {"item": "three"}}"#,
        ]
        let submissions = try lines.enumerated().map { index, line in
            try Submission.parse(line, location: "stdin:\(index + 1)", spec: spec)
        }
        let first = try queue.submit(submissions, source: .submit)
        #expect(first.map(\.description).count == 3)
        guard case .failure(let repeated) = first[1] else {
            Issue.record("a repeated id was taken")
            return
        }
        #expect(repeated.description == #"stdin:2: id: "a" was already given at stdin:1"#)
        let run = try #require(try store.runs.runs().first)
        let again = try queue.submit(
            [try Submission.parse(lines[0], location: "stdin:7", spec: spec)], source: .submit)
        guard case .failure(let refused) = again[0] else {
            Issue.record("an id the run has was taken again")
            return
        }
        #expect(refused.description == #"stdin:7: id: "a" was already submitted to run \#(run.id)"#)
        let items = try store.values("SELECT item_id FROM requests", as: String.self)
        #expect(Set(items) == ["a", long])
    }

    /// Submissions that are all refused (or none at all) make no run.
    @Test func nothingAddedMakesNoRun() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\n")
        let store = try workspace.openStore()
        let queue = SubmissionQueue(
            store: store, spec: try Self.spec(),
            config: try WorkspaceConfigParser.load(workspace: workspace.root))
        #expect(try queue.submit([], source: .spool).isEmpty)
        #expect(try store.runs.runs().isEmpty)
    }
}

extension Result {
    fileprivate var description: String {
        switch self {
        case .success(let value): "\(value)"
        case .failure(let error): "\(error)"
        }
    }
}
