import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak
@testable import offpeak

/// Adding a provider is its own folder and one registration (issue 47, item 7): `EchoProvider`,
/// in this target's EchoProvider/ folder, registered for the test's scope, is known to `init`,
/// `jobs validate`, `estimate` (with no key), the help texts and the dump the docs reference is
/// generated from, and a run, with no edit anywhere else.
@Suite(.ownThreads) struct AddedProviderTests {
    static let registry = ProviderRegistry.builtIn + [EchoProvider.registration]

    @Test func aProviderAddedInItsOwnFolderIsKnownEverywhere() throws {
        let workspace = try TemporaryWorkspace()
        try ProviderRegistry.$registered.withValue(Self.registry) {
            let echo = try #require(ProviderKind(rawValue: "echo"))
            #expect(ProviderKind.names == "anthropic, openai, sim, gemini, deepseek, groq, mistral, echo")

            // `offpeak init --provider echo`: its key, its URL and its models, as it declares them.
            let said = try WorkspaceInit(
                workspace: Workspace(root: workspace.root), provider: echo, binary: "/usr/local/bin/offpeak"
            ).write()
            #expect(said.hasPrefix("wrote offpeak.yaml (provider: echo) and jobs/hello.yaml\nnext:\n"))
            let written = workspace.snapshot("")["offpeak.yaml"] ?? ""
            let lines = written.components(separatedBy: "\n")
            #expect(
                lines[2...5] == [
                    "provider: echo                        # one of anthropic, openai, sim, gemini, deepseek, groq, mistral, echo",
                    "# base_url: https://echo.invalid/v1   # else $ECHO_BASE_URL when set; a URL here wins",
                    "# The API key is read from $ECHO_API_KEY, never from this file.",
                    "# models:                             # the model each tier of a job asks",
                ])
            #expect(lines[6] == "#   echo: {fast: echo-small, balanced: echo-medium, powerful: echo-large}")

            // `offpeak jobs validate`, as the command runs it.
            var validate = try OffpeakCommand.parseAsRoot([
                "jobs", "validate", "--workspace", workspace.root.path,
            ])
            try validate.run()

            // `offpeak estimate hello`, with no key set: its model, its prices, its capabilities.
            let context = try workspace.context()
            #expect(context.config.provider == echo)
            let estimate = try context.estimate(try context.loadJob("hello"))
            #expect(
                estimate.text == """
                    estimate for job hello (nothing sent, nothing written): echo-small on echo
                    items: 3; 0 answered from the cache, 3 to ask
                    answers: about 50 tokens an answer: half of max_tokens (100), as no answer of echo-small is measured in this workspace yet

                    LANE    CALLS  BATCHED  INPUT  CACHE READ  CACHE WRITE  OUTPUT  COST
                    live *  3      0        48     0           0            150     $0.000035
                    naive   3      0        48     0           0            150     $0.000035
                    * the lane the run takes; echo has no batch API
                    naive: one request per item, whole, with no cache, no batching and no prompt cache
                    time: unknown: no call to echo-small is measured in this workspace yet (3 calls, 8 at a time)

                    """)

            // `--provider`'s help, and the dump docs/reference.md is generated from.
            let help = OffpeakCommand.helpMessage(for: OffpeakCommand.Estimate.self, columns: 200)
            #expect(
                help.contains(
                    "The provider to call: anthropic, openai, sim, gemini, deepseek, groq, mistral, echo (overrides offpeak.yaml)."
                ))
            #expect(
                OffpeakCommand._dumpHelp().contains(
                    "anthropic, openai, sim, gemini, deepseek, groq, mistral, echo"))
            let parsed = try OffpeakCommand.parseAsRoot(["estimate", "hello", "--provider", "echo"])
            #expect((parsed as? OffpeakCommand.Estimate)?.planning.choice.provider == echo)

            // A run: three calls, answered by it and billed at its prices.
            let outcome = try workspace.run(job: "hello", environment: ["ECHO_API_KEY": "k"])
            #expect(outcome.status == .ok, "\(outcome.message)")
            #expect(outcome.spend.calls == 3 && outcome.spend.unpricedCalls == 0)
            let price = try #require(PriceTable.bundled.price(for: "echo-small"))
            #expect(
                abs(
                    outcome.spend.dollars
                        - price.dollars(
                            for: Usage(input: outcome.spend.inputTokens, output: outcome.spend.outputTokens),
                            lane: .live)) < 1e-12)
            let answers = workspace.snapshot("out/hello")
            #expect(answers.count == 4, "three answers and index.json: \(answers.keys.sorted())")
            #expect(answers.values.contains { $0.contains("echo: Why are there two high tides a day?") })
        }
        // Outside the scope, the registry is offpeak's own again.
        #expect(ProviderKind(rawValue: "echo") == nil)
        #expect(ProviderKind.names == "anthropic, openai, sim, gemini, deepseek, groq, mistral")
    }
}
