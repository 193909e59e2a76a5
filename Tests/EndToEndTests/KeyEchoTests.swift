import Foundation
import OffpeakTestSupport
import Testing

/// Issue 10, secrets: a server that echoes the request (headers, key and all) into its error, and
/// research sources that carry a key. The keys must end up in no file of the workspace and in
/// nothing any command prints, whichever provider, status and base-URL setting.
@Suite(.ownThreads) struct KeyEchoTests {
    static let anthropicKey = "sk-ant-MARKER-0a1b2c3d4e5f6a7b8c9d"
    static let openAIKey = "sk-MARKER-9f8e7d6c5b4a3f2e1d0c"
    /// In both keys: a key cut anywhere around it would still show it.
    static let marker = "MARKER"

    enum BaseURLFrom: String, Sendable, CaseIterable {
        case offpeakYAML = "offpeak.yaml"
        case environment
    }

    struct Echo: Sendable, CustomTestStringConvertible {
        var provider: String
        var fault: String
        var baseURLFrom: BaseURLFrom
        var testDescription: String { "\(provider), \(fault), base URL from \(baseURLFrom.rawValue)" }
    }

    /// Both providers, by 400, 429 and each 5xx, with the base URL from offpeak.yaml and from the
    /// environment.
    static let matrix: [Echo] = ["anthropic", "openai"].flatMap { provider in
        ["echo400", "echo429", "echo500", "echo502", "echo529"].flatMap { fault in
            BaseURLFrom.allCases.map { Echo(provider: provider, fault: fault, baseURLFrom: $0) }
        }
    }

    /// Both keys set, whichever provider runs; no base URL or log level from the test's own shell.
    static var keys: [String: String?] {
        [
            "ANTHROPIC_API_KEY": anthropicKey, "OPENAI_API_KEY": openAIKey, "ANTHROPIC_BASE_URL": nil,
            "OPENAI_BASE_URL": nil, "OFFPEAK_SIM_URL": nil, "OFFPEAK_LOG_LEVEL": nil,
        ]
    }

    /// Every command that reads the store, after the runs.
    static let reports = [
        ["status"], ["status", "--json"], ["queue"], ["queue", "--json"], ["costs"], ["costs", "--json"],
    ]

    @Test(arguments: matrix)
    func anEchoedKeyIsInNoFileAndInNothingPrinted(_ echo: Echo) throws {
        let sim = try SimProcess(arguments: ["--fault-rate", "\(echo.fault)=1", "--retry-after", "0"])
        let workspace = try TemporaryWorkspace()
        let url = echo.provider == "openai" ? sim.url + "/v1" : sim.url
        var environment = Self.keys
        var config = "provider: \(echo.provider)\nhttp: {max_retries: 1}\n"
        switch echo.baseURLFrom {
        case .offpeakYAML: config += "base_url: \(url)\n"
        case .environment:
            environment[echo.provider == "openai" ? "OPENAI_BASE_URL" : "ANTHROPIC_BASE_URL"] = url
        }
        try workspace.write("offpeak.yaml", config)
        try workspace.write(
            "jobs/inbox.yaml",
            "kind: prompt\nqueue: true\ntemplate: \"{{item}}\"\nmax_tokens: 60\nbatching: off\n")
        let submit = try workspace.offpeak(
            ["submit", "--job", "inbox"], environment: environment,
            stdin: #"{"id": "a", "vars": {"item": "Why is the sky blue?"}}"#)
        let id = try #require(submit.stdout.split(separator: "\n").first.map(String.init), "\(submit.stderr)")
        var printed = [submit]
        printed.append(try workspace.offpeak(["run", "inbox", "--verbose"], environment: environment))
        printed.append(try workspace.offpeak(["run", "inbox"], environment: environment))
        for report in Self.reports + [["result", id], ["result", id, "--json"]] {
            printed.append(try workspace.offpeak(report, environment: environment))
        }

        for result in printed {
            #expect(!result.stdout.contains(Self.marker), "\(result.stdout)")
            #expect(!result.stderr.contains(Self.marker), "\(result.stderr)")
        }
        let leaked = try workspace.files(containing: Self.marker)
        #expect(leaked == [])
        // The echo did come back, and is shown redacted: the test saw what it guards against.
        let header = echo.provider == "openai" ? "authorization: Bearer [redacted]" : "x-api-key: [redacted]"
        let shown = try #require(printed.last).stdout
        #expect(shown.contains(header), "\(shown)")
        #expect(try (sim.stats()["faults"] as? [String: Int])?[echo.fault] ?? 0 >= 1)
    }

    /// A page that carries the keys, and a source whose error page echoes one: the page's text,
    /// the error, the prompt built from them and the answer are all kept and shown redacted.
    @Test func researchSourcesCarryingAKeyLeaveItNowhere() throws {
        let sim = try SimProcess()
        try sim.setSource(
            "leaky",
            content: "The deploy key is \(Self.anthropicKey) and x-api-key: \(Self.openAIKey) here. More.")
        try sim.setSource(
            "denied", content: "Invalid token \(Self.openAIKey)\nfor this resource.", status: 401)
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write(
            "jobs/brief.yaml",
            """
            kind: research
            template: "<document>{{sources}}</document> Question: {{item}}"
            items:
              - {id: leaky, item: "What does it say?", sources: ["\(sim.url)/sources/leaky"]}
              - {id: denied, item: "What does it say?", sources: ["\(sim.url)/sources/denied"]}
            batching: off
            """)
        var printed = [try workspace.offpeak(["run", "brief", "--verbose"], environment: Self.keys)]
        printed.append(try workspace.offpeak(["run", "brief"], environment: Self.keys))
        for report in Self.reports { printed.append(try workspace.offpeak(report, environment: Self.keys)) }

        for result in printed {
            #expect(!result.stdout.contains(Self.marker), "\(result.stdout)")
            #expect(!result.stderr.contains(Self.marker), "\(result.stderr)")
        }
        let leaked = try workspace.files(containing: Self.marker)
        #expect(leaked == [])
        #expect(
            workspace.read("out/brief/leaky.md")
                == "<source url=\"\(sim.url)/sources/leaky\"> The deploy key is [redacted] and x-api-key: [redacted] "
                + "here. More. </source>\n")
        let index = try #require(workspace.read("out/brief/index.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(index.utf8)) as? [String: Any])
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(
            items.first { $0["id"] as? String == "denied" }?["error"] as? String
                == "source \(sim.url)/sources/denied answered HTTP 401: Invalid token [redacted] for this resource."
        )
    }
}
