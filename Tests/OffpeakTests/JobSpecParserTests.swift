import Foundation
import Testing

@testable import Offpeak

/// Parses `yaml` as `jobs/test.yaml` and returns the error it must raise.
private func specError(
    _ yaml: String, path: String = "jobs/test.yaml", workspace: URL = FileManager.default.temporaryDirectory,
    sourceLocation: SourceLocation = #_sourceLocation
) -> OffpeakError? {
    do {
        let spec = try JobSpecParser.parse(yaml: yaml, path: path, workspace: workspace)
        Issue.record("expected an error, got a spec named \(spec.name)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// Asserts the error's location, that its message starts with the field path, and mentions `text`.
private func expectSpecError(
    _ yaml: String, at location: String, field: String, mentions text: String? = nil,
    workspace: URL = FileManager.default.temporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let error = specError(yaml, workspace: workspace, sourceLocation: sourceLocation) else { return }
    #expect(error.status == .dataError, sourceLocation: sourceLocation)
    #expect(error.location == location, "\(error)", sourceLocation: sourceLocation)
    if !field.isEmpty {
        #expect(error.message.hasPrefix("\(field): "), "\(error)", sourceLocation: sourceLocation)
    }
    if let text { #expect(error.message.contains(text), "\(error)", sourceLocation: sourceLocation) }
    #expect(!error.description.contains("\n"), sourceLocation: sourceLocation)
}

struct JobSpecParserTests {
    let workspace = FileManager.default.temporaryDirectory

    func parse(_ yaml: String, path: String = "jobs/test.yaml") throws -> JobSpec {
        try JobSpecParser.parse(yaml: yaml, path: path, workspace: workspace)
    }

    @Test func parsesAFullPromptSpec() throws {
        let spec = try parse(
            """
            name: weekly-digest
            kind: prompt
            tier: fast
            system: "You are terse."
            template: "Answer {{item}} ({{id}})"
            items: ["first", "second"]
            output: out/digest/
            max_tokens: 300
            temperature: 0.2
            constraints: {network: unmetered, power: ac, battery_not_low: true}
            budget: {max_input_tokens: 1000, max_output_tokens: 500, max_calls: 7, max_dollars: 1.5}
            cache_ttl: 7d
            deadline: 24h
            window: 60s
            schedule: "0 6 * * 1"
            timezone: Europe/Berlin
            checkpoint_max_age: 1h30m
            downgrade_on_battery: "yes"
            """)
        #expect(spec.name == "weekly-digest")
        #expect(spec.kind == .prompt)
        #expect(spec.tier == .fast)
        #expect(spec.system == "You are terse.")
        #expect(spec.template.variables == ["item", "id"])
        #expect(spec.items.map(\.id) == ["1", "2"])
        #expect(spec.items[1].variables == ["item": "second", "id": "2"])
        #expect(spec.output == "out/digest")
        #expect(spec.maxTokens == 300)
        #expect(spec.temperature == 0.2)
        #expect(spec.constraints == .init(network: .unmetered, power: .ac, batteryNotLow: true))
        #expect(
            spec.budget == .init(maxInputTokens: 1000, maxOutputTokens: 500, maxCalls: 7, maxDollars: 1.5))
        #expect(spec.cacheTTL == 7 * 86_400)
        #expect(spec.deadline == 86_400)
        #expect(spec.window == 60)
        #expect(spec.schedule == "0 6 * * 1")
        #expect(spec.timezone == "Europe/Berlin")
        #expect(spec.checkpointMaxAge == 5_400)
        #expect(spec.downgradeOnBattery)
        #expect(spec.sourcePath == "jobs/test.yaml")
    }

    @Test func summarizeGetsDefaultsAndTheNameOfItsFile() throws {
        let spec = try parse("kind: summarize\nitems:\n  - some text\n", path: "jobs/notes.yml")
        #expect(spec.name == "notes")
        #expect(spec.output == "out/notes")
        #expect(spec.template.source == JobSpec.defaultSummarizeTemplate)
        #expect(spec.tier == .balanced)
        #expect(spec.maxTokens == 512)
        #expect(spec.cacheTTL == 86_400)
        #expect(spec.checkpointMaxAge == 3_600)
        #expect(spec.deadline == nil && spec.window == nil && spec.schedule == nil && spec.temperature == nil)
        #expect(spec.constraints == .init())
        #expect(spec.budget == .init())
    }

    @Test func researchItemsAreMappingsOfVariables() throws {
        let spec = try parse(
            """
            kind: research
            template: "Research {{topic}} for {{audience}}"
            items:
              - {id: swift, topic: Swift 6, audience: devs}
              - topic: Yams
                audience: 3
            schedule: "@daily"
            """)
        #expect(spec.items.map(\.id) == ["swift", "2"])
        #expect(spec.items[0].variables == ["id": "swift", "topic": "Swift 6", "audience": "devs"])
        #expect(spec.items[1].variables == ["id": "2", "topic": "Yams", "audience": "3"])
        #expect(spec.schedule == "@daily")
    }

    @Test func unknownFieldsSuggestTheClosestName() throws {
        expectSpecError(
            "kind: prompt\ntemplate: x\nitems: [a]\nmax_token: 3\n", at: "jobs/test.yaml:4:1",
            field: "max_token", mentions: "did you mean 'max_tokens'?")
        expectSpecError(
            "kind: prompt\ntemplate: x\nitems: [a]\nbudget:\n  max_calls: 2\n  max_call: 3\n",
            at: "jobs/test.yaml:6:3", field: "budget.max_call", mentions: "did you mean 'max_calls'?")
        let far = try #require(specError("kind: prompt\ntemplate: x\nitems: [a]\ncolour: red\n"))
        #expect(far.message.contains("unknown field") && !far.message.contains("did you mean"))
        #expect(far.message.contains("max_tokens"))
    }

    @Test func wrongTypesAndImpossibleValuesNameTheField() {
        let base = "kind: prompt\ntemplate: x\nitems: [a]\n"
        expectSpecError(
            base + "max_tokens: abc\n", at: "jobs/test.yaml:4:13", field: "max_tokens", mentions: "got 'abc'")
        expectSpecError(base + "max_tokens: 0\n", at: "jobs/test.yaml:4:13", field: "max_tokens")
        expectSpecError(base + "max_tokens: 200001\n", at: "jobs/test.yaml:4:13", field: "max_tokens")
        expectSpecError(
            base + "budget:\n  max_calls: abc\n", at: "jobs/test.yaml:5:14", field: "budget.max_calls",
            mentions: "expected a whole number from 1 to 1_000_000_000, got 'abc'")
        expectSpecError(
            base + "budget: {max_dollars: 0}\n", at: "jobs/test.yaml:4:23", field: "budget.max_dollars")
        expectSpecError(base + "temperature: 2.5\n", at: "jobs/test.yaml:4:14", field: "temperature")
        expectSpecError(
            base + "tier: huge\n", at: "jobs/test.yaml:4:7", field: "tier",
            mentions: "one of fast, balanced, powerful, got 'huge'")
        expectSpecError(
            base + "constraints: {network: wifi}\n", at: "jobs/test.yaml:4:24", field: "constraints.network",
            mentions: "any, online, unmetered")
        expectSpecError(
            base + "downgrade_on_battery: maybe\n", at: "jobs/test.yaml:4:23", field: "downgrade_on_battery")
        expectSpecError(
            base + "system: [a, b]\n", at: "jobs/test.yaml:4:9", field: "system", mentions: "got a list")
        expectSpecError(base + "budget: 5\n", at: "jobs/test.yaml:4:9", field: "budget", mentions: "mapping")
        expectSpecError("kind: essay\n", at: "jobs/test.yaml:1:7", field: "kind", mentions: "summarize")
        expectSpecError(
            "tier: fast\nitems: [a]\n", at: "jobs/test.yaml:1:1", field: "kind", mentions: "required")
        expectSpecError("- kind: prompt\n", at: "jobs/test.yaml:1:1", field: "", mentions: "mapping")
    }

    @Test func namesScheduleTimezoneAndOutputAreChecked() {
        let base = "kind: prompt\ntemplate: x\nitems: [a]\n"
        expectSpecError(base + "name: Weekly Digest\n", at: "jobs/test.yaml:4:7", field: "name")
        let badFile = specError("kind: summarize\nitems: [a]\n", path: "jobs/My Job.yaml")
        #expect(badFile?.message.hasPrefix("name: the file name 'My Job'") == true)
        expectSpecError(
            base + "schedule: 0 6 * *\n", at: "jobs/test.yaml:4:11", field: "schedule", mentions: "5 cron")
        expectSpecError(base + "schedule: \"@often\"\n", at: "jobs/test.yaml:4:11", field: "schedule")
        expectSpecError(
            base + "schedule: \"0 25 * * *\"\n", at: "jobs/test.yaml:4:11", field: "schedule",
            mentions: "hour: expected 0-23, got '25'")
        expectSpecError(
            base + "schedule: \"0 0 30 2 *\"\n", at: "jobs/test.yaml:4:11", field: "schedule",
            mentions: "never fires")
        expectSpecError(base + "timezone: Mars/Olympus\n", at: "jobs/test.yaml:4:11", field: "timezone")
        expectSpecError(
            base + "output: /tmp/x\n", at: "jobs/test.yaml:4:9", field: "output", mentions: "absolute")
        expectSpecError(base + "output: out/../../x\n", at: "jobs/test.yaml:4:9", field: "output")
    }

    @Test func durationsAcceptUnitsAndBareSeconds() throws {
        #expect(DurationParser.seconds("90s") == 90)
        #expect(DurationParser.seconds("10m") == 600)
        #expect(DurationParser.seconds("1h30m") == 5_400)
        #expect(DurationParser.seconds("2d3h") == 183_600)
        #expect(DurationParser.seconds("45") == 45)
        #expect(DurationParser.seconds("0") == 0)
        for bad in ["", "1hr", "h", "1.5h", "-5", "5s5s", "1h 30m", "99999999999999999999d"] {
            #expect(DurationParser.seconds(bad) == nil, "\(bad)")
        }
        let spec = try parse("kind: prompt\ntemplate: x\nitems: [a]\ncache_ttl: 0\nwindow: 120\n")
        #expect(spec.cacheTTL == 0)
        #expect(spec.window == 120)
        let base = "kind: prompt\ntemplate: x\nitems: [a]\n"
        expectSpecError(
            base + "deadline: 0s\n", at: "jobs/test.yaml:4:11", field: "deadline", mentions: "got '0s'")
        expectSpecError(
            base + "cache_ttl: 1hr\n", at: "jobs/test.yaml:4:12", field: "cache_ttl", mentions: "1h30m")
        expectSpecError(
            base + "checkpoint_max_age: -1h\n", at: "jobs/test.yaml:4:21", field: "checkpoint_max_age")
    }

    @Test func templatesMustParseAndEveryItemMustSupplyTheirVariables() {
        expectSpecError(
            "kind: prompt\ntemplate: \"Hi {{item\"\nitems: [a]\n", at: "jobs/test.yaml:2:11",
            field: "template",
            mentions: "no closing")
        expectSpecError(
            "kind: prompt\nitems: [a]\ntemplate: |\n  About {{unknown}}\n", at: "jobs/test.yaml:3:11",
            field: "template", mentions: "variable 'unknown' is not supplied by items[1]")
        expectSpecError(
            "kind: research\ntemplate: \"{{topic}}\"\nitems:\n  - topic: a\n  - {id: b, subject: c}\n",
            at: "jobs/test.yaml:2:11", field: "template", mentions: "items[2] (id 'b'")
        expectSpecError(
            "kind: summarize\nitems:\n  - text\n  - {topic: x}\n", at: "jobs/test.yaml:4:5",
            field: "items[2]",
            mentions: "'item'")
        expectSpecError(
            "kind: prompt\nitems: [a]\n", at: "jobs/test.yaml:1:1", field: "template", mentions: "required")
    }

    @Test func itemsMustExistBeWellFormedAndHaveUniqueIDs() {
        expectSpecError("kind: summarize\n", at: "jobs/test.yaml:1:1", field: "items", mentions: "no items")
        expectSpecError(
            "kind: summarize\nitems: []\n", at: "jobs/test.yaml:2:8", field: "items", mentions: "no items")
        expectSpecError(
            "kind: summarize\nitems:\n  - {id: a, item: x}\n  - {id: a, item: y}\n", at: "jobs/test.yaml:4:5",
            field: "items[2]", mentions: "id 'a' is already used by items[1]")
        expectSpecError(
            "kind: summarize\nitems:\n  - {id: '2', item: x}\n  - plain\n", at: "jobs/test.yaml:4:5",
            field: "items[2]", mentions: "'2'")
        expectSpecError(
            "kind: summarize\nitems:\n  - [a, b]\n", at: "jobs/test.yaml:3:5", field: "items[1]",
            mentions: "string or a mapping")
        expectSpecError(
            "kind: summarize\nitems:\n  - {item: {nested: 1}}\n", at: "jobs/test.yaml:3:12",
            field: "items[1].item")
    }

    @Test func yamlSyntaxErrorsAndDuplicateKeysGiveTheirLine() {
        let syntax = specError("kind: prompt\ntemplate: x\nitems: [a, b\nmax_tokens: 3\n")
        #expect(syntax?.status == .dataError)
        #expect(syntax?.message.hasPrefix("invalid YAML: ") == true)
        #expect(syntax?.location?.hasPrefix("jobs/test.yaml:4:") == true, "\(String(describing: syntax))")
        let indent = specError("kind: prompt\n  template: x: y\n")
        #expect(indent?.location?.hasPrefix("jobs/test.yaml:2:") == true, "\(String(describing: indent))")
        expectSpecError(
            "kind: prompt\ntemplate: x\nitems: [a]\nkind: summarize\n", at: "jobs/test.yaml:4:1",
            field: "kind",
            mentions: "duplicate key")
        expectSpecError(
            "kind: prompt\ntemplate: x\nitems: [a]\nbudget:\n  max_calls: 1\n  # c\n  max_calls: 2\n",
            at: "jobs/test.yaml:7:3", field: "max_calls", mentions: "duplicate")
        let empty = specError("# nothing\n")
        #expect(empty?.location == "jobs/test.yaml:1:1")
    }

    /// Keys are compared as the text this parser reads them by: `1` and `"1"` in one mapping were
    /// two keys to Yams's default resolver (a number and a string), and the second silently won.
    @Test func keysThatReadAsTheSameTextAreDuplicates() {
        expectSpecError(
            "kind: prompt\ntemplate: \"{{1}}\"\nitems:\n  - {id: a, vars: {1: x, \"1\": y}}\n",
            at: "jobs/test.yaml:4:20", field: "", mentions: "duplicate")
    }
}

/// Inputs, spec files and JOB arguments, against a real folder.
struct JobSpecFilesTests {
    /// A fresh workspace under the temporary directory, removed by the caller.
    func makeWorkspace(_ files: [String: String]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-\(UUID().uuidString)")
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        return root
    }

    @Test func inputGlobsBecomeItemsInOrder() throws {
        let root = try makeWorkspace([
            "docs/b.md": "Bee", "docs/a.md": "Ay", "docs/sub/c.md": "Sea", "docs/notes.txt": "no",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let yaml = "kind: summarize\nitems: [inline]\ninputs: [\"docs/*.md\", \"docs/*/*.md\"]\n"
        let spec = try JobSpecParser.parse(yaml: yaml, path: "jobs/docs.yaml", workspace: root)
        #expect(spec.items.map(\.id) == ["1", "docs/a.md", "docs/b.md", "docs/sub/c.md"])
        #expect(
            spec.items[2].variables == [
                "item": "Bee", "path": "docs/b.md", "name": "b.md", "id": "docs/b.md",
            ])
        #expect(spec.inputs == ["docs/*.md", "docs/*/*.md"])
    }

    @Test func inputErrorsNameTheGlobOrFile() throws {
        let root = try makeWorkspace(["docs/a.md": "Ay"])
        defer { try? FileManager.default.removeItem(at: root) }
        try Data([0x66, 0xFF, 0xFE]).write(to: root.appendingPathComponent("docs/bad.md"))
        func error(_ yaml: String) -> OffpeakError? {
            do { _ = try JobSpecParser.parse(yaml: yaml, path: "jobs/x.yaml", workspace: root) } catch {
                return error
            }
            return nil
        }
        let none = error("kind: summarize\ninputs:\n  - docs/a.md\n  - \"*.pdf\"\n")
        #expect(none?.location == "jobs/x.yaml:4:5")
        #expect(none?.message == "inputs[2]: '*.pdf' matches no file in the workspace")
        let binary = error("kind: summarize\ninputs: docs/*.md\n")
        #expect(binary?.location == "jobs/x.yaml:2:9")
        #expect(
            binary?.message
                == "inputs[1]: docs/bad.md:1:2 (matched by 'docs/*.md'): not valid UTF-8: byte 0xFF does not "
                + "belong to a UTF-8 character; save the file as UTF-8")
        let twice = error("kind: summarize\ninputs: [docs/a.md, docs/a*]\n")
        #expect(twice?.message == "inputs[2]: id 'docs/a.md' is already used by inputs[1]")
        #expect(error("kind: summarize\ninputs: [../x/*.md]\n")?.message.hasPrefix("inputs[1]: ") == true)
        #expect(error("kind: summarize\ninputs: [/etc/*]\n")?.location == "jobs/x.yaml:2:10")
    }

    @Test func resolveTakesAPathOrAJobName() throws {
        let root = try makeWorkspace([
            "jobs/digest.yaml": "kind: summarize\nitems: [a]\n",
            "jobs/short.yml": "kind: summarize\nitems: [b]\n",
            "jobs/readme.txt": "not a spec", "other/spec.yaml": "kind: summarize\nitems: [c]\n",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let jobs = root.appendingPathComponent("jobs")
        #expect(
            try JobSpecParser.resolve("digest", workspace: root) == jobs.appendingPathComponent("digest.yaml")
        )
        #expect(
            try JobSpecParser.resolve("short", workspace: root) == jobs.appendingPathComponent("short.yml"))
        #expect(
            try JobSpecParser.resolve("short.yml", workspace: root)
                == jobs.appendingPathComponent("short.yml"))
        let byPath = try JobSpecParser.resolve("other/spec.yaml", workspace: root)
        #expect(byPath.standardizedFileURL.path == root.appendingPathComponent("other/spec.yaml").path)
        let absolute = root.appendingPathComponent("other/spec.yaml").path
        #expect(try JobSpecParser.resolve(absolute, workspace: root).path == absolute)
        do {
            _ = try JobSpecParser.resolve("missing", workspace: root)
            Issue.record("expected an error")
        } catch {
            #expect(error.status == .usage)
            #expect(error.message.contains("'missing'") && error.message.contains("digest, short"))
        }
        #expect(JobSpecParser.specFiles(in: root).map(\.lastPathComponent) == ["digest.yaml", "short.yml"])
        #expect(JobSpecParser.specFiles(in: root.appendingPathComponent("nowhere")).isEmpty)
    }

    @Test func loadNamesTheFileRelativeToTheWorkspace() throws {
        let root = try makeWorkspace(["jobs/bad.yaml": "kind: summarize\nitems: [a]\nwindow: soon\n"])
        defer { try? FileManager.default.removeItem(at: root) }
        do {
            _ = try JobSpecParser.load(path: root.appendingPathComponent("jobs/bad.yaml"), workspace: root)
            Issue.record("expected an error")
        } catch {
            #expect(error.description.hasPrefix("jobs/bad.yaml:3:9: window: expected a duration"))
        }
        do {
            _ = try JobSpecParser.load(path: root.appendingPathComponent("jobs/none.yaml"), workspace: root)
            Issue.record("expected an error")
        } catch {
            #expect(error.status == .ioError)
            #expect(error.location == "jobs/none.yaml")
        }
        let good = try makeWorkspace(["jobs/ok.yaml": "kind: summarize\nitems: [a]\n"])
        defer { try? FileManager.default.removeItem(at: good) }
        let spec = try JobSpecParser.load(path: good.appendingPathComponent("jobs/ok.yaml"), workspace: good)
        #expect(spec.name == "ok" && spec.sourcePath == "jobs/ok.yaml")
    }
}

/// `sources`: research-source URLs for the job and for each inline item.
struct JobSpecParserSourcesTests {
    func parse(_ yaml: String) throws -> JobSpec {
        try JobSpecParser.parse(
            yaml: yaml, path: "jobs/test.yaml", workspace: FileManager.default.temporaryDirectory)
    }

    @Test func sourcesAreHTTPURLsForTheJobAndForEachItem() throws {
        let spec = try parse(
            """
            kind: research
            template: "Research {{topic}}"
            sources:
              - https://example.org/guide
              - http://example.com:8080/a?b=c
            items:
              - {topic: Swift, sources: [https://swift.org/blog]}
              - topic: Yams
                sources: https://github.com/jpsim/Yams
              - topic: none
                sources:
            """)
        #expect(spec.sources == ["https://example.org/guide", "http://example.com:8080/a?b=c"])
        #expect(
            spec.items.map(\.sources) == [["https://swift.org/blog"], ["https://github.com/jpsim/Yams"], []])
        // `sources` is not a template variable.
        #expect(spec.items[0].variables == ["id": "1", "topic": "Swift"])
        #expect(try parse("kind: prompt\ntemplate: x\nitems: [a]\n").sources.isEmpty)
    }

    @Test func badSourceURLsNameTheEntryAndItsLine() {
        let head = "kind: research\ntemplate: \"{{item}}\"\nitems: [a]\n"
        expectSpecError(
            head + "sources:\n  - https://ok.example\n  - ftp://files.example/x\n", at: "jobs/test.yaml:6:5",
            field: "sources[2]", mentions: "expected an http or https URL, got 'ftp://files.example/x'")
        expectSpecError(
            head + "sources: [http:///no-host]\n", at: "jobs/test.yaml:4:11", field: "sources[1]",
            mentions: "with a host")
        expectSpecError(
            head + "sources: [not a url]\n", at: "jobs/test.yaml:4:11", field: "sources[1]",
            mentions: "'not a url'")
        expectSpecError(
            head + "sources: {a: b}\n", at: "jobs/test.yaml:4:10", field: "sources", mentions: "a list")
        expectSpecError(
            "kind: research\ntemplate: \"{{topic}}\"\nitems:\n  - topic: x\n    sources: [https://a.example, mailto:me@x]\n",
            at: "jobs/test.yaml:5:34", field: "items[1].sources[2]", mentions: "'mailto:me@x'")
        expectSpecError(
            "kind: research\ntemplate: \"{{topic}}\"\nitems:\n  - topic: x\n    other: [a]\n",
            at: "jobs/test.yaml:5:12", field: "items[1].other", mentions: "expected a text value")
    }

    @Test func chunkingIsOnForSummarizeAndOffForOtherKinds() throws {
        let summarize = try parse("kind: summarize\nitems: [a]\n")
        #expect(summarize.chunking == JobSpec.Chunking(enabled: true, maxTokens: 6000, overlap: 200))
        let prompt = try parse("kind: prompt\ntemplate: x\nitems: [a]\n")
        #expect(prompt.chunking.enabled == false)
        let off = try parse("kind: summarize\nitems: [a]\nchunking: off\n")
        #expect(off.chunking.enabled == false)
        let on = try parse("kind: prompt\ntemplate: \"{{item}}\"\nitems: [a]\nchunking: on\n")
        #expect(on.chunking == JobSpec.Chunking())
        let custom = try parse("kind: summarize\nitems: [a]\nchunking: {max_tokens: 1000, overlap: 50}\n")
        #expect(custom.chunking == JobSpec.Chunking(enabled: true, maxTokens: 1000, overlap: 50))
        let small = try parse("kind: summarize\nitems: [a]\nchunking: {max_tokens: 300}\n")
        #expect(small.chunking.overlap == 149, "the default overlap stays under half a chunk")
    }

    @Test func badChunkingNamesTheField() {
        let base = "kind: summarize\nitems: [a]\n"
        expectSpecError(
            base + "chunking: sometimes\n", at: "jobs/test.yaml:3:11", field: "chunking",
            mentions: "expected 'off', 'on' or a mapping")
        expectSpecError(
            base + "chunking: {max_tokens: 10}\n", at: "jobs/test.yaml:3:24", field: "chunking.max_tokens",
            mentions: "from 100 to 1_000_000")
        expectSpecError(
            base + "chunking: {max_tokens: 1000, overlap: 500}\n", at: "jobs/test.yaml:3:39",
            field: "chunking.overlap", mentions: "from 0 to 499")
        expectSpecError(
            base + "chunking: {max_token: 1000}\n", at: "jobs/test.yaml:3:12", field: "chunking.max_token",
            mentions: "did you mean 'max_tokens'?")
    }
}
