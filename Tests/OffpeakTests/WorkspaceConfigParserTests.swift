import Foundation
import Testing

@testable import Offpeak

struct WorkspaceConfigParserTests {
    /// The error `yaml` must raise, checked to be a configuration error (78) on one line.
    func configError(_ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) -> OffpeakError? {
        do {
            _ = try WorkspaceConfigParser.parse(yaml: yaml, path: "offpeak.yaml")
            Issue.record("expected an error", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(error.status == .configuration, sourceLocation: sourceLocation)
            #expect(!error.description.contains("\n"), sourceLocation: sourceLocation)
            return error
        }
    }

    @Test func noFileGivesTheDefaults() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        #expect(try WorkspaceConfigParser.load(workspace: root) == WorkspaceConfig())
        #expect(
            try WorkspaceConfigParser.parse(yaml: "# only a comment\n", path: "offpeak.yaml")
                == WorkspaceConfig())
    }

    @Test func parsesEveryFieldAndMergesModelsOverTheDefaults() throws {
        let config = try WorkspaceConfigParser.parse(
            yaml: """
                provider: sim
                base_url: http://127.0.0.1:8089
                models:
                  anthropic: {fast: claude-haiku-9}
                  openai: {fast: gpt-4o-mini, powerful: o4}
                prices: prices.json
                network: {metered: [wwan0, usb0], unmetered: eth0}
                cache: {max_bytes: 64MB}
                http: {connect_timeout: 5s, timeout: 2m, max_retries: 0}
                """, path: "offpeak.yaml")
        #expect(config.provider == .sim)
        #expect(config.baseURL == "http://127.0.0.1:8089")
        #expect(config.models[.anthropic] == [.fast: "claude-haiku-9"], "only what offpeak.yaml sets")
        #expect(config.model(for: .fast, provider: .anthropic) == "claude-haiku-9")
        #expect(config.model(for: .balanced, provider: .anthropic) == "claude-sonnet-4-5")
        #expect(config.model(for: .powerful, provider: .openai) == "o4")
        #expect(config.model(for: .balanced, provider: .openai) == "gpt-4.1")
        #expect(config.models[.sim] == nil && config.model(for: .fast, provider: .sim) == "claude-haiku-4-5")
        #expect(config.pricesPath == "prices.json")
        #expect(config.meteredInterfaces == ["wwan0", "usb0"])
        #expect(config.unmeteredInterfaces == ["eth0"])
        #expect(config.cacheMaxBytes == 64 << 20)
        #expect(config.connectTimeout == 5)
        #expect(config.requestTimeout == 120)
        #expect(config.maxRetries == 0)
    }

    @Test func byteSizesTakeUnits() {
        #expect(ByteSizeParser.bytes("1024") == 1024)
        #expect(ByteSizeParser.bytes("10KB") == 10 << 10)
        #expect(ByteSizeParser.bytes("256 MiB") == 256 << 20)
        #expect(ByteSizeParser.bytes("2gb") == 2 << 30)
        for bad in ["", "MB", "12XB", "1.5GB", "-1MB"] { #expect(ByteSizeParser.bytes(bad) == nil, "\(bad)") }
    }

    @Test func errorsAreLocatedAndExitWithConfigurationStatus() {
        let unknown = configError("provider: sim\nmodels:\n  anthropic: {fats: x}\n")
        #expect(unknown?.location == "offpeak.yaml:3:15")
        #expect(
            unknown?.message.hasPrefix("models.anthropic.fats: unknown field; did you mean 'fast'?") == true)
        let top = configError("provider: sim\nbaseurl: http://x\n")
        #expect(top?.location == "offpeak.yaml:2:1")
        #expect(top?.message.contains("did you mean 'base_url'?") == true)
        let provider = configError("provider: simm\n")
        #expect(provider?.location == "offpeak.yaml:1:11")
        #expect(
            provider?.message
                == "provider: expected one of anthropic, openai, sim, gemini, deepseek, groq, mistral, got 'simm'"
        )
        let size = configError("cache:\n  max_bytes: lots\n")
        #expect(size?.location == "offpeak.yaml:2:14")
        #expect(size?.message.hasPrefix("cache.max_bytes: expected a size") == true)
        let retries = configError("http: {max_retries: -1}\n")
        #expect(retries?.message.hasPrefix("http.max_retries: ") == true)
        #expect(configError("http: {timeout: 0}\n")?.message.hasPrefix("http.timeout: ") == true)
        #expect(configError("base_url: localhost:80\n")?.location == "offpeak.yaml:1:11")
        #expect(
            configError("network: {metered: [eth0], unmetered: [eth0]}\n")?.message.contains("'eth0'") == true
        )
        #expect(configError("models: [a]\n")?.message.hasPrefix("models: expected a mapping") == true)
        let syntax = configError("provider: sim\nhttp: {timeout: 1s\n")
        #expect(syntax?.location?.hasPrefix("offpeak.yaml:3:") == true, "\(String(describing: syntax))")
        #expect(configError("provider: sim\nprovider: openai\n")?.location == "offpeak.yaml:2:1")
    }

    /// `limits:` per provider; a provider or field left out keeps its default (nil: decided
    /// where calls go, by `ProviderLimits.inFlight(for:baseURL:)`).
    @Test func parsesLimitsPerProvider() throws {
        let config = try WorkspaceConfigParser.parse(
            yaml: """
                provider: openai
                limits:
                  anthropic: {in_flight: 8, requests_per_minute: 50, tokens_per_minute: 40_000}
                  openai: {in_flight: 2}
                  sim:
                """, path: "offpeak.yaml")
        #expect(
            config.limits == [
                .anthropic: ProviderLimits(inFlight: 8, requestsPerMinute: 50, tokensPerMinute: 40_000),
                .openai: ProviderLimits(inFlight: 2),
            ])
        #expect(config.limits() == ProviderLimits(inFlight: 2))
        #expect(config.limits(for: .sim) == ProviderLimits())
        #expect(WorkspaceConfig().limits(for: .anthropic) == ProviderLimits())
    }

    @Test(arguments: [
        (
            "limits:\n  antropic: {in_flight: 2}\n", "offpeak.yaml:2:3",
            "limits.antropic: unknown field; did you mean 'anthropic'?"
        ),
        (
            "limits:\n  openai: {inflight: 2}\n", "offpeak.yaml:2:12",
            "limits.openai.inflight: unknown field; did you mean 'in_flight'?"
        ),
        (
            "limits:\n  openai: {in_flight: 0}\n", "offpeak.yaml:2:23",
            "limits.openai.in_flight: expected a whole number from 1 to 1000, got '0'"
        ),
        (
            "limits:\n  sim: {requests_per_minute: 1.5}\n", "offpeak.yaml:2:30",
            "limits.sim.requests_per_minute: expected a whole number from 1 to 1_000_000, got '1.5'"
        ),
        (
            "limits:\n  sim: {tokens_per_minute: lots}\n", "offpeak.yaml:2:28",
            "limits.sim.tokens_per_minute: expected a whole number from 1 to 1_000_000_000_000, got 'lots'"
        ),
        ("limits: 8\n", "offpeak.yaml:1:9", "limits: expected a mapping"),
    ])
    func limitMistakesAreLocated(yaml: String, location: String, message: String) {
        let error = configError(yaml)
        #expect(error?.location == location)
        #expect(error?.message.hasPrefix(message) == true, "\(String(describing: error?.message))")
    }

    @Test func loadReportsTheFileByItsWorkspaceName() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("offpeak.yaml")
        try Data("provider: openai\ncache: {max_bytes: 1GiB}\n".utf8).write(to: file)
        let config = try WorkspaceConfigParser.load(workspace: root)
        #expect(config.provider == .openai && config.cacheMaxBytes == 1 << 30)
        try Data("provider: openai\nhttp:\n  timeout: forever\n".utf8).write(to: file)
        do {
            _ = try WorkspaceConfigParser.load(workspace: root)
            Issue.record("expected an error")
        } catch {
            #expect(error.status.rawValue == 78)
            #expect(error.description.hasPrefix("offpeak.yaml:3:12: http.timeout: expected a duration"))
        }
    }

    @Test func metricsNameAPromFileForNodeExporter() throws {
        #expect(WorkspaceConfig().metricsTextfile == nil)
        let config = try WorkspaceConfigParser.parse(
            yaml: "metrics: {textfile: /var/lib/prometheus/node-exporter/offpeak.prom}\n",
            path: "offpeak.yaml")
        #expect(config.metricsTextfile == "/var/lib/prometheus/node-exporter/offpeak.prom")
        let relative = try WorkspaceConfigParser.parse(
            yaml: "metrics:\n  textfile: m/offpeak.prom\n", path: "offpeak.yaml")
        #expect(relative.metricsTextfile == "m/offpeak.prom")
        #expect(
            try WorkspaceConfigParser.parse(yaml: "metrics: {}\n", path: "offpeak.yaml").metricsTextfile
                == nil)
    }

    @Test func metricsMistakesNameTheFieldAndWhere() {
        let expected =
            "expected a file path ending in .prom (node_exporter's textfile collector reads only *.prom files)"
        for (yaml, location, got) in [
            ("metrics: {textfile: offpeak.txt}\n", "offpeak.yaml:1:21", "offpeak.txt"),
            ("provider: sim\nmetrics:\n  textfile: m/.prom\n", "offpeak.yaml:3:13", "m/.prom"),
            ("metrics: {textfile: m/offpeak.prom/}\n", "offpeak.yaml:1:21", "m/offpeak.prom/"),
        ] {
            let error = configError(yaml)
            #expect(error?.location == location, "\(yaml)")
            #expect(error?.message == "metrics.textfile: \(expected), got '\(got)'", "\(yaml)")
        }
        let empty = configError("metrics: {textfile: ' '}\n")
        #expect(empty?.description == "offpeak.yaml:1:21: metrics.textfile: expected a non-empty string")
        let unknown = configError("metrics: {text_file: m/offpeak.prom}\n")
        #expect(unknown?.location == "offpeak.yaml:1:11")
        #expect(
            unknown?.message.hasPrefix("metrics.text_file: unknown field; did you mean 'textfile'?") == true)
        let notMapping = configError("metrics: m/offpeak.prom\n")
        #expect(notMapping?.location == "offpeak.yaml:1:10")
    }
}
