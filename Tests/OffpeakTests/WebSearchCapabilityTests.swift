import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Which providers and models search the web, as each declares it (`WebSearchSupport`): a job
/// that searches with a model that cannot is refused before anything is stored or sent (exit 78),
/// by `run` and `estimate` alike; a search model's calls leave out `temperature` and `top_p`.
@Suite(.ownThreads) struct WebSearchCapabilityTests {
    static let refusal =
        "job news searches the web, but OpenAI's chat completions search only with a search model "
        + "(gpt-4o-search-preview, gpt-4o-mini-search-preview), not gpt-4.1; set one in offpeak.yaml "
        + "(models: {openai: {balanced: gpt-4o-search-preview}}), or remove search:"

    /// A workspace on OpenAI (its default models: `gpt-4.1` for `balanced`) whose job `news` searches.
    static func workspace(models: String = "", extra: String = "") throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: openai\n\(models)")
        try workspace.write(
            "jobs/news.yaml",
            """
            kind: research
            template: "What is new with {{item}}?"
            items: [Swift]
            search: {queries: ["{{item}} news"]}
            \(extra)
            """)
        return workspace
    }

    @Test func eachProviderDeclaresHowItSearches() {
        #expect(ProviderKind.anthropic.capabilities.webSearch == .cappedTool)
        #expect(ProviderKind.sim.capabilities.webSearch == .cappedTool)
        #expect(ProviderKind.gemini.capabilities.webSearch == .grounding)
        let openAI = ProviderKind.openai.capabilities.webSearch
        #expect(
            openAI
                == .searchModels(
                    api: "OpenAI's chat completions",
                    examples: ["gpt-4o-search-preview", "gpt-4o-mini-search-preview"]))
        for model in ["gpt-4o-search-preview", "gpt-4o-mini-search-preview-2025-03-11", "gpt-5-search-api"] {
            #expect(openAI?.searches(with: model) == true, "\(model)")
            #expect(openAI?.takesNoSampling(model) == true, "\(model)")
        }
        #expect(openAI?.searches(with: "openai/gpt-4o-search-preview") == true)
        for model in ["gpt-4.1", "gpt-4o-mini", "o3", "research-model"] {
            #expect(openAI?.searches(with: model) == false, "\(model)")
            #expect(openAI?.takesNoSampling(model) == false, "\(model)")
        }
        #expect(ProviderKind.anthropic.capabilities.webSearch?.searches(with: "any-model") == true)
        #expect(ProviderKind.gemini.capabilities.webSearch?.takesNoSampling("gemini-2.5-flash") == false)
    }

    @Test func aJobThatSearchesWithAModelThatCannotIsRefused() throws {
        let spec = try WebSearchTests.parse(
            "kind: research\ntemplate: '{{item}}'\nitems: [a]\nsearch: {}\ntemperature: 0.2\n")
        let refused = try #require(
            JobRunner.searchRefusal(spec, model: "gpt-4.1", tier: .fast, provider: .openai))
        #expect(refused.status == .configuration && refused.status.rawValue == 78)
        #expect(
            refused.description
                == "jobs/r.yaml: job r searches the web, but OpenAI's chat completions search only with a "
                + "search model (gpt-4o-search-preview, gpt-4o-mini-search-preview), not gpt-4.1; set one in "
                + "offpeak.yaml (models: {openai: {fast: gpt-4o-search-preview}}), or remove search:")
        #expect(
            JobRunner.searchRefusal(spec, model: "gpt-4o-mini-search-preview", tier: .fast, provider: .openai)
                == nil)
        #expect(
            JobRunner.searchRefusal(spec, model: "claude-haiku-4-5", tier: .fast, provider: .anthropic) == nil
        )
        #expect(
            JobRunner.searchRefusal(spec, model: "gemini-2.5-flash", tier: .fast, provider: .gemini) == nil)
        var plain = spec
        plain.search = nil
        #expect(JobRunner.searchRefusal(plain, model: "gpt-4.1", tier: .fast, provider: .openai) == nil)

        #expect(
            JobRunner.samplingNote(spec, model: "gpt-4o-mini-search-preview", provider: .openai)
                == "job r: gpt-4o-mini-search-preview takes no temperature, so its calls leave out temperature 0.2"
        )
        #expect(JobRunner.samplingNote(spec, model: "gpt-4.1", provider: .openai) == nil)
        // A search model takes none, searching or not.
        #expect(
            JobRunner.samplingNote(plain, model: "gpt-4o-search-preview", provider: .openai)
                == "job r: gpt-4o-search-preview takes no temperature, so its calls leave out temperature 0.2"
        )
        plain.temperature = nil
        #expect(JobRunner.samplingNote(plain, model: "gpt-4o-search-preview", provider: .openai) == nil)
    }

    /// `offpeak run` on OpenAI's `gpt-4.1` refuses with exit 78 and one line, and stores nothing.
    @Test func runRefusesBeforeAnythingIsStoredOrSent() throws {
        let workspace = try Self.workspace()
        let result = try workspace.offpeak(["run", "news"], environment: ["OPENAI_API_KEY": "sk-test"])
        #expect(result.status == 78)
        #expect(result.stderr == "offpeak: jobs/news.yaml: \(Self.refusal)\n")
        #expect(try workspace.openStore().runs.latestResumableRun(job: "news") == nil)
    }

    /// An estimate does not price work the run would refuse.
    @Test func estimateRefusesTheSameWay() throws {
        let workspace = try Self.workspace()
        let context = try workspace.context(["OPENAI_API_KEY": "sk-test"])
        let spec = try context.loadJob("news")
        #expect {
            _ = try context.estimate(spec)
        } throws: { error in
            (error as? OffpeakError)?.description == "jobs/news.yaml: \(Self.refusal)"
                && (error as? OffpeakError)?.status == .configuration
        }
        // A search model is estimated, at its bundled price per search, and told its temperature goes.
        let searching = try Self.workspace(
            models: "models: {openai: {balanced: gpt-4o-mini-search-preview}}\n", extra: "temperature: 0.2")
        let searchingContext = try searching.context(["OPENAI_API_KEY": "sk-test"])
        let estimate = try searchingContext.estimate(try searchingContext.loadJob("news"))
        #expect(estimate.model == "gpt-4o-mini-search-preview" && estimate.live.searches == 3)
        #expect(
            estimate.notes.contains(
                "job news: gpt-4o-mini-search-preview takes no temperature, so its calls leave out temperature 0.2"
            ))
        #expect(!estimate.text.contains("has no price per search"))
    }

    @Test func aSearchModelsBodyHasWebSearchOptionsAndNoSampling() throws {
        var request = WebSearchTests.request(searchUses: 3)
        request.model = "gpt-4o-mini-search-preview"
        request.temperature = 0.2
        request.topP = 0.9
        let body = try WebSearchTests.json(OpenAIProvider.requestBody(for: request))
        #expect((body["web_search_options"] as? [String: Any])?.isEmpty == true)
        #expect(body["temperature"] == nil && body["top_p"] == nil)
        #expect(body["max_tokens"] as? Int == 200)
        // The batch lane's lines are the same bodies.
        let flex = try WebSearchTests.json(OpenAIProvider.requestBody(for: request, lane: .flex))
        #expect(flex["temperature"] == nil && flex["top_p"] == nil)
        // Another model keeps them, and the request keeps them for its cache key.
        request.model = "gpt-4.1"
        request.searchUses = nil
        let plain = try WebSearchTests.json(OpenAIProvider.requestBody(for: request))
        #expect(plain["temperature"] as? Double == 0.2 && plain["top_p"] as? Double == 0.9)
        #expect(plain["web_search_options"] == nil)
    }

    /// The bundled table prices OpenAI's search models as LiteLLM does, each search at its
    /// `search_context_size_medium`.
    @Test func openAIsSearchModelsAreBundledWithTheirPricePerSearch() throws {
        let full = try #require(PriceTable.bundled.cost(of: "gpt-4o-search-preview"))
        #expect(full.inputCostPerToken == 2.5e-6 && full.outputCostPerToken == 1e-5)
        #expect(full.searchContextCostPerQuery == .init(low: 0.03, medium: 0.035, high: 0.05))
        #expect(full.perSearch == 0.035)
        let mini = try #require(PriceTable.bundled.cost(of: "gpt-4o-mini-search-preview-2025-03-11"))
        #expect(mini.inputCostPerToken == 1.5e-7 && mini.outputCostPerToken == 6e-7)
        #expect(mini.searchContextCostPerQuery == .init(low: 0.025, medium: 0.0275, high: 0.03))
        #expect(mini.perSearch == 0.0275)
        #expect(mini.maxInputTokens == 128_000 && mini.maxOutputTokens == 16_384)
    }
}
