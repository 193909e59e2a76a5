import Foundation
import OffpeakTestSupport
import Testing

/// What the built `offpeak` says about inputs it must refuse: values past their bounds, alias
/// bombs, files that are not UTF-8, a bad price file, `summarize --out` outside the workspace.
/// Each is refused before the store is opened, with one located line on stderr.
@Suite(.ownThreads) struct SpecInputTests {
    /// A workspace on the sim (no key needed), with `files` written into it.
    static func workspace(_ files: [String: [UInt8]] = [:]) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\n")
        for (path, bytes) in files {
            try workspace.write(path, "")
            try Data(bytes).write(to: workspace.root.appendingPathComponent(path))
        }
        return workspace
    }

    static func storeExists(_ workspace: TemporaryWorkspace) -> Bool {
        FileManager.default.fileExists(
            atPath: workspace.root.appendingPathComponent("cache/offpeak.sqlite").path)
    }

    @Test func aDeadlinePastTheBoundIsRefusedBeforeTheStoreIsTouched() throws {
        let spec = "kind: prompt\ntemplate: x\nitems: [a]\ndeadline: 3000000d\n"
        let workspace = try Self.workspace(["jobs/far.yaml": Array(spec.utf8)])
        for command in [["run", "far"], ["jobs", "validate", "far"]] {
            let result = try workspace.offpeak(command)
            #expect(result.status == 65)
            #expect(
                result.stderr
                    == "offpeak: jobs/far.yaml:4:11: deadline: expected a duration from 1s to 3650d (10 years), "
                    + "like 90s, 10m, 24h, 7d or 1h30m, got '3000000d'\n")
        }
        #expect(!Self.storeExists(workspace))
    }

    /// Bounded by each command's own timeout (30 s), not by a time limit on the test: a test's time
    /// counts from when it was scheduled, and on a loaded machine it waited longer than the limit
    /// for a thread before it started.
    @Test func anAliasBombIsRefusedByValidateAndTick() throws {
        var lines = ["kind: prompt", "template: x", "items:", "  - &a0 [x, x, x, x, x, x, x, x, x, x]"]
        for level in 1...9 {
            lines.append(
                "  - &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
                    + "]")
        }
        lines.append("  - {? *a8 : x}")
        let workspace = try Self.workspace(["jobs/bomb.yaml": Array(lines.joined(separator: "\n").utf8)])
        let message =
            "jobs/bomb.yaml:7:45: items[4][8]: too many aliases: '*a2' stands for 1111 values; "
            + "aliases may stand for at most 10_000 in one file"
        let validate = try workspace.offpeak(["jobs", "validate", "bomb"], timeout: 30)
        #expect(validate.status == 65)
        #expect(validate.stderr == "offpeak: \(message)\n")
        let tick = try workspace.offpeak(["tick"], timeout: 30)
        #expect(tick.status == 65)
        #expect(tick.stdout == "error: \(message)\nnothing to do\n")
    }

    @Test func aUTF16SpecIsNamedAsUTF16() throws {
        let text = "kind: prompt\ntemplate: x\nitems: [a]\n"
        let utf16 = [0xFF, 0xFE] + Array(text.data(using: .utf16LittleEndian) ?? Data())
        let workspace = try Self.workspace(["jobs/wide.yaml": utf16])
        let result = try workspace.offpeak(["jobs", "validate", "wide"])
        #expect(result.status == 65)
        #expect(
            result.stderr
                == "offpeak: jobs/wide.yaml:1:1: the file is UTF-16 text (it starts with a little-endian "
                + "byte-order mark), not UTF-8; save it as UTF-8\n")
    }

    @Test func aBadPriceFileNamesOffpeakYAMLAndTheLineInTheFile() throws {
        let workspace = try Self.workspace([
            "prices.json": Array("{\"my-model\": {\"input_cost_per_token\": \"caf".utf8) + [
                0xE9, 0x22, 0x7D, 0x7D,
            ]
        ])
        try workspace.write("offpeak.yaml", "provider: sim\nprices: prices.json\n")
        let result = try workspace.offpeak(["status"])
        #expect(result.status == 78)
        #expect(
            result.stderr
                == "offpeak: offpeak.yaml:2:9: prices: prices.json:1:43: not valid UTF-8: byte 0xE9 does not "
                + "belong to a UTF-8 character; save the file as UTF-8\n")
    }

    @Test(arguments: [
        "../offpeak-outside-\(UUID().uuidString)", "/tmp/offpeak-abs-\(UUID().uuidString)", "", ".",
    ])
    func summarizeOutMustBeAFolderInsideTheWorkspace(out: String) throws {
        let workspace = try Self.workspace(["a.md": Array("A short note.\n".utf8)])
        let before = try FileManager.default.contentsOfDirectory(atPath: workspace.root.path).sorted()
        let result = try workspace.offpeak(["summarize", "a.md", "--out", out])
        #expect(result.status == 64)
        let problem =
            out.hasPrefix("/")
            ? "expected a folder relative to the workspace, got the absolute path '\(out)'"
            : out.hasPrefix("..")
                ? "expected a folder inside the workspace, got '\(out)', which leaves it"
                : "expected a folder inside the workspace, got '\(out)'"
        #expect(result.stderr == "offpeak: --out: \(problem)\n")
        #expect(result.stdout == "")
        let target = out.hasPrefix("/") ? out : workspace.root.appendingPathComponent(out).path
        #expect(out.isEmpty || out == "." || !FileManager.default.fileExists(atPath: target))
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.root.path).sorted() == before)
    }
}
