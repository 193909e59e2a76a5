import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Files that are not UTF-8 text are refused at the line and column of the first bad byte, and
/// UTF-16 is named as such, for every file offpeak reads text from.
@Suite(.ownThreads) struct UTF8TextTests {
    static let latin1 =
        "not valid UTF-8: byte 0xE9 does not belong to a UTF-8 character; save the file as UTF-8"

    static func utf16(_ text: String, _ encoding: String.Encoding) -> [UInt8] {
        Array(text.data(using: encoding) ?? Data())
    }

    static func invalid(_ byte: String) -> String {
        "not valid UTF-8: byte 0x\(byte) does not belong to a UTF-8 character; save the file as UTF-8"
    }

    static func utf16Problem(_ why: String) -> String {
        "the file is UTF-16 text (\(why)), not UTF-8; save it as UTF-8"
    }

    static let header = "kind: prompt\n"
    static let cases: [(bytes: [UInt8], expected: String)] = [
        (Array("a: 1\nb: 2\nc: caf".utf8) + [0xE9, 0x0A], "3:7: \(invalid("E9"))"),
        (Array("é€x".utf8) + [0xFF], "1:4: \(invalid("FF"))"),
        (Array("ok\n".utf8) + [0xE2, 0x82], "2:1: \(invalid("E2"))"),
        ([0x61, 0xC0, 0xAF], "1:2: \(invalid("C0"))"),
        ([0x0A, 0x0A, 0xED, 0xA0, 0x80], "3:1: \(invalid("ED"))"),
        (Array("a\nbc".utf8) + [0x00], "2:3: a NUL byte (0x00) is not text"),
        (
            [0xFF, 0xFE] + utf16(header, .utf16LittleEndian),
            "1:1: \(utf16Problem("it starts with a little-endian byte-order mark"))"
        ),
        (
            [0xFE, 0xFF] + utf16(header, .utf16BigEndian),
            "1:1: \(utf16Problem("it starts with a big-endian byte-order mark"))"
        ),
        (utf16(header, .utf16LittleEndian), "1:1: \(utf16Problem("every other byte is NUL, little-endian"))"),
        (utf16(header, .utf16BigEndian), "1:1: \(utf16Problem("every other byte is NUL, big-endian"))"),
    ]

    @Test(arguments: cases)
    func theFirstBadByteIsNamedByLineAndColumn(bytes: [UInt8], expected: String) {
        let error = #expect(throws: OffpeakError.self) {
            try UTF8Text.decode(Data(bytes), file: "f.yaml", status: .dataError)
        }
        #expect(error?.description == "f.yaml:\(expected)")
    }

    @Test func validTextDecodesWithoutAByteOrderMark() throws {
        #expect(
            try UTF8Text.decode(
                Data([0xEF, 0xBB, 0xBF] + Array("kind: é".utf8)), file: "f", status: .dataError) == "kind: é")
        #expect(UTF8Text.position(ofByte: 9, in: Array("ab\nçd\nxyz".utf8)) == (3, 3))
    }

    @Test func aJobSpecAndItsInputsNameTheLine() throws {
        let workspace = try TemporaryWorkspace()
        try Data(Array("kind: prompt\ntemplate: x\nitems: [caf".utf8) + [0xE9, 0x5D, 0x0A]).write(
            to: workspace.root.appendingPathComponent("jobs/latin.yaml"))
        let error = #expect(throws: OffpeakError.self) {
            try JobSpecParser.load(
                path: workspace.root.appendingPathComponent("jobs/latin.yaml"), workspace: workspace.root)
        }
        #expect(error?.status == .dataError)
        #expect(error?.description == "jobs/latin.yaml:3:12: \(Self.latin1)")

        try workspace.write("jobs/docs.yaml", "kind: summarize\ninputs: [docs/*.md]\n")
        try workspace.write("docs/a.md", "fine\n")
        try Data(Self.utf16("# Notes\n", .utf16LittleEndian)).write(
            to: workspace.root.appendingPathComponent("docs/b.md"))
        let inputs = #expect(throws: OffpeakError.self) {
            try JobSpecParser.load(
                path: workspace.root.appendingPathComponent("jobs/docs.yaml"), workspace: workspace.root)
        }
        #expect(
            inputs?.description
                == "jobs/docs.yaml:2:10: inputs[1]: docs/b.md:1:1 (matched by 'docs/*.md'): the file is UTF-16 text "
                + "(every other byte is NUL, little-endian), not UTF-8; save it as UTF-8")
    }

    @Test func offpeakYAMLNamesTheLineAndExits78() throws {
        let workspace = try TemporaryWorkspace()
        try Data(Array("provider: sim\nmodels: {sim: {fast: m".utf8) + [0xFC, 0x7D, 0x7D]).write(
            to: workspace.root.appendingPathComponent("offpeak.yaml"))
        let error = #expect(throws: OffpeakError.self) {
            try WorkspaceConfigParser.load(workspace: workspace.root)
        }
        #expect(error?.status == .configuration)
        #expect(
            error?.description
                == "offpeak.yaml:2:23: not valid UTF-8: byte 0xFC does not belong to a UTF-8 character; save the file as UTF-8"
        )
    }

    @Test func aDocumentToSummarizeNamesTheLine() throws {
        let workspace = try TemporaryWorkspace()
        try Data(Array("line one\nline two é".utf8) + [0xE9]).write(
            to: workspace.root.appendingPathComponent("notes.txt"))
        let error = #expect(throws: OffpeakError.self) {
            try JobSpec.summarize(
                files: ["notes.txt"], tier: .fast, output: nil, maxTokens: 100,
                workspace: Workspace(root: workspace.root))
        }
        #expect(error?.status == .dataError)
        #expect(
            error?.description
                == "notes.txt:2:11: not valid UTF-8: byte 0xE9 does not belong to a UTF-8 character; save the file as UTF-8"
        )
    }

    /// The price file is named by `offpeak.yaml`: the message points there (`prices`) and into the
    /// price file, at the line and column when there is one.
    @Test(arguments: [
        (
            [0x7B, 0x22, 0x6D, 0x22, 0x3A, 0xFF, 0x7D],
            "prices.json:1:6: not valid UTF-8: byte 0xFF does not belong to a UTF-8 character; save the file as UTF-8"
        ),
        (
            Array("{\n  \"m\": {\"input_cost_per_token\": 1},\n  \"n\": oops\n}".utf8),
            "prices.json:3:8: not valid JSON (Invalid value around character 45.)"
        ),
        (
            Array(#"{"m": {"input_cost_per_token": "cheap"}}"#.utf8),
            "prices.json:1:32: price entry \"m\" is not valid (input_cost_per_token: Expected to decode Double but found a string instead.)"
        ),
        (
            Array("[1, 2]".utf8),
            "prices.json: expected a JSON object of models (LiteLLM's format), got a list"
        ),
    ])
    func aBadPriceFileNamesOffpeakYAMLAndTheFile(bytes: [UInt8], expected: String) throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\n\nprices:   prices.json\n")
        try Data(bytes).write(to: workspace.root.appendingPathComponent("prices.json"))
        let error = #expect(throws: OffpeakError.self) {
            try WorkspaceContext(
                workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
                logger: Logger(label: "t"))
        }
        #expect(error?.status == .configuration)
        #expect(error?.description == "offpeak.yaml:3:11: prices: \(expected)")
    }
}
