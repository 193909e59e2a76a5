import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `fallbacks:` in offpeak.yaml (issue 50, item 1): a chain for every tier or one per tier, each step
/// a provider, a model or both; what falls back and what never does.
@Suite(.ownThreads) struct FallbackConfigTests {
    static func parse(_ yaml: String) throws(OffpeakError) -> WorkspaceConfig {
        try WorkspaceConfigParser.parse(yaml: yaml, path: "offpeak.yaml")
    }

    @Test func aListIsEveryTiersChainAndAMappingIsEachTiersOwn() throws {
        let every = try Self.parse(
            """
            provider: anthropic
            fallbacks:
              - model: claude-haiku-4-5
              - {provider: openai, model: gpt-4.1-mini, base_url: "http://127.0.0.1:9000/v1", key_env: BACKUP_KEY}
            retry_primary_after: 5m
            """)
        let chain = [
            FallbackRoute(model: "claude-haiku-4-5"),
            FallbackRoute(
                provider: .openai, model: "gpt-4.1-mini", baseURL: "http://127.0.0.1:9000/v1",
                keyVariable: "BACKUP_KEY"),
        ]
        #expect(every.fallbacks == [.fast: chain, .balanced: chain, .powerful: chain])
        #expect(every.retryPrimaryAfter == 300)
        let byTier = try Self.parse("fallbacks: {balanced: [{provider: deepseek}]}\n")
        #expect(byTier.fallbacks == [.balanced: [FallbackRoute(provider: .deepseek)]])
        #expect(byTier.retryPrimaryAfter == 60)
        #expect(try Self.parse("provider: sim\n").fallbacks.isEmpty)
    }

    @Test func aWrongStepIsRefusedWhereItIs() {
        for (yaml, message) in [
            (
                "fallbacks: [{}]\n",
                "offpeak.yaml:1:13: fallbacks[0]: a fallback names a provider, a model or a base URL (or more of them)"
            ),
            (
                "fallbacks: [{provider: opena}]\n",
                "offpeak.yaml:1:24: fallbacks[0].provider: expected one of anthropic, openai, sim, gemini, deepseek, groq, mistral, got 'opena'"
            ),
            (
                "fallbacks: {fats: [{model: m}]}\n",
                "offpeak.yaml:1:13: fallbacks.fats: unknown field; did you mean 'fast'? (allowed: fast, balanced, powerful)"
            ),
            (
                "fallbacks: [{model: m, key_env: 'my key'}]\n",
                "offpeak.yaml:1:33: fallbacks[0].key_env: expected an environment variable's name (such as BACKUP_KEY), got 'my key'"
            ),
            (
                "fallbacks: [{model: m, base_url: localhost:9000}]\n",
                "offpeak.yaml:1:34: fallbacks[0].base_url: expected an http:// or https:// URL, got 'localhost:9000'"
            ),
            (
                "fallbacks: {fast: {model: m}}\n",
                "offpeak.yaml:1:19: fallbacks.fast: expected a list, got a mapping"
            ),
        ] {
            do {
                _ = try Self.parse(yaml)
                Issue.record("\(yaml) was accepted")
            } catch {
                #expect(error.status == .configuration)
                #expect(error.description == message)
            }
        }
    }

    @Test func whatFallsBackIsWhatTheProviderCannotDoNowNeverTheUsersMistake() {
        let falls: [ProviderError] = [
            .unreachable("Connection refused"), .timeout(seconds: 60), .truncated("transfer closed"),
            .http(status: 529, message: "Overloaded"), .http(status: 503, message: "unavailable"),
            .http(status: 500, message: "internal"),
            .http(
                status: 429,
                message: "You exceeded your current quota, please check your plan and billing details."),
            .http(status: 429, message: "Resource has been exhausted (e.g. check quota)."),
            .http(
                status: 400,
                message:
                    "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing."
            ),
        ]
        for error in falls { #expect(error.callsForFallback, "\(error)") }
        let stays: [ProviderError] = [
            .http(status: 400, message: "max_tokens: must be at most 8192"),
            .http(status: 401, message: "invalid x-api-key"), .http(status: 403, message: "forbidden"),
            .http(status: 404, message: "model: claude-nonesuch"), .missingKey(variable: "OPENAI_API_KEY"),
            .keyRefused(status: 400, message: "API key not valid", url: nil), .badResponse("not JSON"),
            .unreachable("cancelled"),
        ]
        for error in stays { #expect(!error.callsForFallback, "\(error)") }
    }

    @Test func aStepWithoutItsKeyOrThatRepeatsTheChainIsAConfigurationError() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml", "provider: sim\nfallbacks: [{provider: openai, key_env: BACKUP_KEY}]\n")
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: [:], logger: Logger(label: "test"))
        let spec = JobSpec(name: "j", kind: .prompt, template: try Template("{{item}}"), output: "out/j")
        let primary = try context.makeProvider()
        #expect(throws: OffpeakError.self) { try context.makeFallbacks(for: spec, primary: primary) }
        do {
            _ = try context.makeFallbacks(for: spec, primary: primary)
        } catch {
            #expect(error.status == .configuration)
            #expect(error.description.hasPrefix("offpeak.yaml: fallbacks of "))
            #expect(error.description.contains("BACKUP_KEY is not set"))
        }
        try workspace.write("offpeak.yaml", "provider: sim\nfallbacks: [{model: claude-haiku-4-5}]\n")
        let again = try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: [:], logger: Logger(label: "test"))
        var fast = spec
        fast.tier = .fast
        do {
            _ = try again.makeFallbacks(for: fast, primary: try again.makeProvider())
            Issue.record("the primary again was accepted as its own fallback")
        } catch {
            #expect(
                error.description
                    == "offpeak.yaml: fallbacks of fast, [0]: sim claude-haiku-4-5 at http://127.0.0.1:8089 is already in "
                    + "the chain; a fallback is another model or another provider")
        }
    }

    @Test func aJobsOwnChainReplacesItsTiers() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nfallbacks: [{model: claude-sonnet-4-5}]\n")
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: ["BACKUP_KEY": "sk-b"],
            logger: Logger(label: "test"))
        let spec = try JobSpecParser.parse(
            yaml: "kind: prompt\ntier: fast\nitems: [a]\ntemplate: '{{item}}'\n"
                + "fallbacks: [{provider: openai, model: gpt-4.1-mini, key_env: BACKUP_KEY}]\n",
            path: "jobs/j.yaml", workspace: workspace.root)
        #expect(
            spec.fallbacks == [
                FallbackRoute(provider: .openai, model: "gpt-4.1-mini", keyVariable: "BACKUP_KEY")
            ])
        let made = try context.makeFallbacks(for: spec, primary: try context.makeProvider())
        #expect(made[.fast]?.map(\.key) == ["openai https://api.openai.com/v1 gpt-4.1-mini"])
        var none = spec
        none.fallbacks = []
        #expect(
            try context.makeFallbacks(for: none, primary: try context.makeProvider())[.fast]?.isEmpty == true)
        none.fallbacks = nil
        #expect(
            try context.makeFallbacks(for: none, primary: try context.makeProvider())[.fast]?.map(\.key)
                == ["sim http://127.0.0.1:8089 claude-sonnet-4-5"])
        do {
            _ = try JobSpecParser.parse(
                yaml: "kind: prompt\nitems: [a]\ntemplate: '{{item}}'\nfallbacks: [{base_url: x}]\n",
                path: "jobs/j.yaml", workspace: workspace.root)
            Issue.record("a step with a bad base URL was accepted")
        } catch {
            #expect(error.status == .dataError)
            #expect(
                error.description
                    == "jobs/j.yaml:4:24: fallbacks[0].base_url: expected an http:// or https:// URL, got 'x'"
            )
        }
    }
}
