import Foundation
import OffpeakTestSupport
import Testing

/// The shell blocks of the README and the guides are run (issue 47, item 4): each ```sh block in
/// a fresh workspace, with the built binaries first on PATH and offpeak-sim answering
/// (`OFFPEAK_SIM_URL`), on the suite's store, must exit 0; each ```console
/// block's `$ ` commands must print what the block shows, exactly. A block marked
/// `<!-- workspace: example -->` runs in a copy of the checkout's example workspace (offpeak.yaml,
/// jobs/ and samples/, what `make demo` runs) instead of an empty one. A block a test cannot run here
/// (a real API key, sudo, a crontab, a server of the reader's) says so on the line before it,
/// `<!-- not run: why -->`, and is counted, with its reason.
@Suite(.serialized) struct DocsBlocksTests {
    struct Block: CustomStringConvertible {
        var file: String
        var line: Int
        var language: String
        var text: String
        /// Why it is not run; nil: it is.
        var notRun: String?
        /// Run in a copy of the checkout's example workspace (`<!-- workspace: example -->`), not
        /// an empty one.
        var inExample = false

        var description: String { "\(file):\(line)" }
    }

    static let root = BuiltBinaries.packageRoot

    /// The README, CONTRIBUTING.md and the guides (not the generated reference).
    static var documents: [String] {
        let docs =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path))
            ?? []
        return ["README.md", "CONTRIBUTING.md"]
            + docs.filter { $0.hasSuffix(".md") && $0 != "reference.md" }.sorted().map { "docs/\($0)" }
    }

    /// The ```sh and ```console blocks of `markdown`.
    static func blocks(_ markdown: String, file: String) -> [Block] {
        let lines = markdown.components(separatedBy: "\n")
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            guard line.hasPrefix("```") else {
                index += 1
                continue
            }
            let language = String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces)
            var end = index + 1
            while end < lines.count, !lines[end].hasPrefix("```") { end += 1 }
            if ["sh", "console"].contains(language) {
                let before = index > 0 ? lines[index - 1] : ""
                let prefix = "<!-- not run: "
                let notRun =
                    before.hasPrefix(prefix) && before.hasSuffix(" -->")
                    ? String(before.dropFirst(prefix.count).dropLast(4)) : nil
                blocks.append(
                    Block(
                        file: file, line: index + 1, language: language,
                        text: lines[(index + 1)..<min(end, lines.count)].joined(separator: "\n"),
                        notRun: notRun, inExample: before == "<!-- workspace: example -->"))
            }
            index = end + 1
        }
        return blocks
    }

    /// Runs `script` with bash in `workspace`, as a reader would paste it.
    static func bash(_ script: String, in workspace: TemporaryWorkspace, sim: SimProcess) throws
        -> CommandResult
    {
        var environment: [String: String?] = [
            "PATH": BuiltBinaries.directory.path + ":"
                + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "OFFPEAK_SIM_URL": sim.url, "OFFPEAK_WORKSPACE": nil,
        ]
        for (name, value) in try workspace.storeEnvironment() { environment[name] = value }
        return try CommandResult.run(
            URL(fileURLWithPath: "/bin/bash"), ["-e", "-o", "pipefail", "-c", script], in: workspace.root,
            environment: environment)
    }

    @Test func everyShellBlockRunsOrSaysWhyNot() throws {
        let sim = try SimProcess()
        var (run, compared) = (0, 0)
        var notRun: [String: [String]] = [:]
        for document in Self.documents {
            let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
            for block in Self.blocks(text, file: document) {
                if let reason = block.notRun {
                    #expect(!reason.isEmpty, "\(block): a block not run says why")
                    notRun[reason, default: []].append(block.description)
                    continue
                }
                let workspace = try TemporaryWorkspace()
                if block.inExample {
                    // The checkout's example workspace: offpeak.yaml, jobs/digest.yaml and
                    // jobs/questions.yaml, and the documents in samples/.
                    try FileManager.default.removeItem(at: workspace.root.appendingPathComponent("jobs"))
                    for item in ["offpeak.yaml", "jobs", "samples"] {
                        try FileManager.default.copyItem(
                            at: Self.root.appendingPathComponent(item),
                            to: workspace.root.appendingPathComponent(item))
                    }
                }
                if block.language == "sh" {
                    let result = try Self.bash(block.text, in: workspace, sim: sim)
                    #expect(result.status == 0, "\(block): exit \(result.status)\n\(result.stderr)")
                    run += 1
                    continue
                }
                // A console block: each `$ ` command and the lines it prints, up to the next.
                var commands: [(command: String, output: [String])] = []
                for line in block.text.components(separatedBy: "\n") {
                    if line.hasPrefix("$ ") {
                        commands.append((String(line.dropFirst(2)), []))
                    } else if !commands.isEmpty {
                        commands[commands.count - 1].output.append(line)
                    }
                }
                #expect(!commands.isEmpty, "\(block): a console block shows a `$ ` command")
                for (command, output) in commands {
                    let result = try Self.bash(command + " 2>&1", in: workspace, sim: sim)
                    let expected = output.joined(separator: "\n") + (output.isEmpty ? "" : "\n")
                    #expect(result.stdout == expected, "\(block): \(command)")
                    compared += 1
                }
                run += 1
            }
        }
        let reasons = notRun.keys.sorted().map { "  \($0): \(notRun[$0]?.joined(separator: ", ") ?? "")" }
        print(
            "docs blocks: \(run) run, \(compared) commands' output compared, "
                + "\(notRun.values.map(\.count).reduce(0, +)) not run:\n" + reasons.joined(separator: "\n"))
        #expect(run >= 5)
    }
}
