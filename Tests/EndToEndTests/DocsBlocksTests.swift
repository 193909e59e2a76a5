import Foundation
import OffpeakTestSupport
import Testing

/// The shell blocks of the README and the guides are run (issue 47, item 4): each ```sh block in
/// a fresh workspace, with the built binaries first on PATH and offpeak-sim answering
/// (`OFFPEAK_SIM_URL`), on the suite's store, must exit 0; each ```console
/// block's `$ ` commands must print what the block shows, exactly: stdout and stderr, in the
/// order a terminal shows them (`[..]` in a line shown stands for a run's id, and a time may be up to
/// 5 s later than shown: `matches`). A block marked
/// `<!-- workspace: example -->` runs in a copy of the checkout's example workspace (offpeak.yaml,
/// jobs/ and samples/, what `make demo` runs) instead of an empty one. Blocks marked
/// `<!-- session: NAME -->` are one walk-through: they run in order in one shell, in one workspace,
/// so what one block starts (`cd`, a server in the background) the next one has; `; waits for
/// PORT` after the name makes the next block wait until a server listens on that loopback port, as a
/// reader would. A block a test cannot run here
/// (a real API key, sudo, a crontab, a server of the reader's) says so on the line before it,
/// `<!-- not run: why -->`, and is counted, with its reason.
@Suite(.ownThreads, .serialized) struct DocsBlocksTests {
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
        /// The walk-through it is a step of (`<!-- session: NAME -->`); nil: it runs alone.
        var session: String?
        /// Loopback ports the next step waits for, which this one starts a server on.
        var waitsFor: [Int] = []

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
                var block = Block(
                    file: file, line: index + 1, language: language,
                    text: lines[(index + 1)..<min(end, lines.count)].joined(separator: "\n"),
                    notRun: notRun, inExample: before == "<!-- workspace: example -->")
                let session = "<!-- session: "
                if before.hasPrefix(session) && before.hasSuffix(" -->") {
                    let marker = before.dropFirst(session.count).dropLast(4).components(
                        separatedBy: "; waits for ")
                    block.session = marker[0]
                    block.waitsFor = marker.dropFirst().flatMap {
                        $0.components(separatedBy: ", ").compactMap { Int($0) }
                    }
                }
                blocks.append(block)
            }
            index = end + 1
        }
        return blocks
    }

    /// A console block's `$ ` commands, each with the lines it prints, up to the next.
    static func commands(_ block: Block) -> [(command: String, output: String)] {
        var commands: [(command: String, output: [String])] = []
        for line in block.text.components(separatedBy: "\n") {
            if line.hasPrefix("$ ") {
                commands.append((String(line.dropFirst(2)), []))
            } else if !commands.isEmpty {
                commands[commands.count - 1].output.append(line)
            }
        }
        return commands.map {
            ($0.command, $0.output.joined(separator: "\n") + ($0.output.isEmpty ? "" : "\n"))
        }
    }

    /// One walk-through's blocks as one bash script: each `sh` block under `set -e`, each console
    /// command with what it prints (stdout and stderr) kept in `folder`/N.out and its status in
    /// N.status, N counting the steps from 0. The servers it starts are killed when it ends (with
    /// SIGKILL: a child of the test process may have SIGTERM blocked).
    static func sessionScript(_ blocks: [Block], folder: URL) -> (script: String, steps: [(Block, String?)]) {
        var script = "trap 'kill -KILL $(jobs -p) 2>/dev/null; wait' EXIT\nset -o pipefail\n"
        var steps: [(Block, String?)] = []
        for block in blocks {
            let step = { "\(folder.path)/\(steps.count)" }
            if block.language == "sh" {
                script += "set -e\n\(block.text)\nset +e\necho 0 > \(step()).status\n"
                steps.append((block, nil))
            } else {
                for (command, output) in commands(block) {
                    script += "{ \(command)\n} > \(step()).out 2>&1; echo $? > \(step()).status\n"
                    steps.append((block, output))
                }
            }
            for port in block.waitsFor {
                script +=
                    "for _ in $(seq 600); do (exec 3<>/dev/tcp/127.0.0.1/\(port)) 2>/dev/null && break; sleep 0.1; done\n"
            }
        }
        return (script, steps)
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
        // Each line out as it is printed (`stdbuf -oL`, as on a terminal), so what a command writes
        // to stdout and to stderr comes in the order a reader sees it.
        return try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/stdbuf"),
            ["-oL", "/bin/bash", "-e", "-o", "pipefail", "-c", script],
            in: workspace.root, environment: environment)
    }

    /// What `matches` lets differ: a run's id where `[..]` stands, and a time up to 5 s later.
    @Test func aShownTimeMatchesAPrintedOneUpToFiveSecondsLater() {
        let shown = "tickets  tickets-[..]  3  2026-11-30T06:05:00Z  2026-11-30T06:05:00Z  laptop\n"
        func printed(_ first: String, _ second: String) -> String {
            "tickets  tickets-20261130T050528-12b5ab4a  3  2026-11-30T06:05:\(first)Z  2026-11-30T06:05:\(second)Z  laptop\n"
        }
        #expect(Self.matches(printed("00", "00"), shown))
        #expect(Self.matches(printed("01", "05"), shown))
        #expect(!Self.matches(printed("06", "00"), shown), "more than 5 s later")
        #expect(
            !Self.matches(printed("00", "00").replacingOccurrences(of: "06:05:00", with: "06:04:59"), shown))
        #expect(!Self.matches(printed("01", "01").replacingOccurrences(of: "laptop", with: "server"), shown))
        #expect(!Self.matches("at 2026-11-30T06:05:01Z\n", "at 2026-11-30T06:05:00Z, checked\n"))
    }

    @Test func everyShellBlockRunsOrSaysWhyNot() throws {
        let sim = try SimProcess()
        var (run, compared) = (0, 0)
        var notRun: [String: [String]] = [:]
        for document in Self.documents {
            let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
            let blocks = Self.blocks(text, file: document)
            var sessionsRun: Set<String> = []
            for block in blocks {
                if let reason = block.notRun {
                    #expect(!reason.isEmpty, "\(block): a block not run says why")
                    notRun[reason, default: []].append(block.description)
                    continue
                }
                if let session = block.session {
                    guard sessionsRun.insert(session).inserted else { continue }
                    let steps = blocks.filter { $0.session == session }
                    compared += try Self.runSession(steps, sim: sim)
                    run += steps.count
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
                let commands = Self.commands(block)
                #expect(!commands.isEmpty, "\(block): a console block shows a `$ ` command")
                for (command, output) in commands {
                    let result = try Self.bash(command + " 2>&1", in: workspace, sim: sim)
                    #expect(result.stdout == output, "\(block): \(command)")
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

    /// Whether `printed` is `expected`, line by line, exactly; but that `[..]` in an expected line
    /// (as trycmd writes it) stands for any text within that line: a run's id, made of the time it
    /// was made and a random part, is the one thing a reader's run prints differently.
    static func matches(_ printed: String, _ expected: String) -> Bool {
        let (lines, patterns) = (
            printed.components(separatedBy: "\n"), expected.components(separatedBy: "\n")
        )
        guard lines.count == patterns.count else { return false }
        return zip(lines, patterns).allSatisfy { printedLine, pattern in
            let line = withShownTimes(printedLine, like: pattern)
            let parts = pattern.components(separatedBy: "[..]")
            guard parts.count > 1 else { return line == pattern }
            guard let first = parts.first, let last = parts.last, line.hasPrefix(first),
                line.dropFirst(first.count).hasSuffix(last), line.count >= first.count + last.count
            else { return false }
            var rest = line.dropFirst(first.count).dropLast(last.count)
            for part in parts.dropFirst().dropLast() {
                guard let found = rest.range(of: part) else { return false }
                rest = rest[found.upperBound...]
            }
            return true
        }
    }

    /// `line` with each time it prints (`2026-11-30T06:05:01Z`) written as `pattern` shows it, when
    /// it is that time or up to 5 s later. A walk-through's `--now` sets a clock that goes on at the
    /// machine's pace, and a loaded machine may record a deferral a second or two after the moment
    /// the block gives. Any other difference, or a time earlier than shown, is left to fail.
    static func withShownTimes(_ line: String, like pattern: String) -> String {
        let stamp = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/
        let (printed, shown) = (line.matches(of: stamp), pattern.matches(of: stamp))
        guard !shown.isEmpty, printed.count == shown.count else { return line }
        var result = line
        for (time, asShown) in zip(printed, shown).reversed() {
            guard let at = try? Date(String(time.output), strategy: .iso8601),
                let shownAt = try? Date(String(asShown.output), strategy: .iso8601),
                (0...5).contains(at.timeIntervalSince(shownAt))
            else { return line }
            result.replaceSubrange(time.range, with: asShown.output)
        }
        return result
    }

    /// Runs one walk-through's blocks in one shell and one workspace, and compares what each
    /// console command printed. - Returns: the commands compared.
    static func runSession(_ blocks: [Block], sim: SimProcess) throws -> Int {
        let workspace = try TemporaryWorkspace()
        let folder = try TemporaryWorkspace()
        let (script, steps) = sessionScript(blocks, folder: folder.root)
        let result = try bash(script, in: workspace, sim: sim)
        var compared = 0
        for (index, (block, expected)) in steps.enumerated() {
            let status = try? String(
                contentsOf: folder.root.appendingPathComponent("\(index).status"), encoding: .utf8)
            guard let status else {
                Issue.record("\(block): the walk-through stopped before this block\n\(result.stderr)")
                break
            }
            guard let expected else {
                #expect(status == "0\n", "\(block): exit \(status)")
                continue
            }
            let printed = try String(
                contentsOf: folder.root.appendingPathComponent("\(index).out"), encoding: .utf8)
            #expect(Self.matches(printed, expected), "\(block): step \(index)\n\(printed)")
            compared += 1
        }
        return compared
    }
}
