import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 24, item 4: a research job's `search` lets each item's call run the provider's web search
/// (offpeak-sim's canned one, in Anthropic's shape, over loopback). Each search is billed as the
/// provider bills it, counted in the ledger, in budgets and in `estimate`; the answer's citations
/// are kept with it, in `index.json` and in the cache.
@Suite(.ownThreads) struct WebSearchRunTests {
    static func workspace(sim: SimProcess, ttl: String = "1h", extra: String = "") throws
        -> TemporaryWorkspace
    {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nhttp: {max_retries: 1}\n")
        try workspace.write(
            "jobs/news.yaml",
            """
            kind: research
            template: "What is new with {{item}}?"
            items:
              - {id: swift, item: Swift}
              - {id: lz4, item: LZ4, search: {queries: ["lz4 release", "lz4 bugs", "lz4 speed"], max_uses: 2}}
            search: {queries: ["{{item}} news"], max_uses: 3}
            cache_ttl: \(ttl)
            \(extra)
            """)
        return workspace
    }

    static func context(_ workspace: TemporaryWorkspace) throws -> WorkspaceContext {
        try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
            logger: Logger(label: "test"))
    }

    @Test func searchesAreBilledCountedAndCitedAndTheirCitationsComeBackFromTheCache() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim)
        let first = try CachedRunTests.run(workspace, job: "news")
        #expect(first.status == .ok, "\(first.message)")
        #expect(first.spend.calls == 2, "an item that searches is asked alone")

        let stats = try sim.stats()
        let billed = try #require(stats["billed"] as? [String: Any])
        #expect(billed["web_search_requests"] as? Int == 3, "one search for swift, two of lz4's three")

        let store = try workspace.openStore()
        let model = "claude-sonnet-4-5"
        #expect(try store.ledger.searchesByModel() == [model: 3])
        let price = try #require(PriceTable.bundled.cost(of: model))
        #expect(price.perSearch == 0.01)
        let tokens = price.dollars(
            for: Usage(
                input: first.spend.inputTokens, output: first.spend.outputTokens,
                cacheRead: first.spend.cacheReadTokens, cacheWrite: first.spend.cacheWriteTokens),
            lane: .live)
        #expect(abs(first.spend.dollars - (tokens + 0.03)) < 1e-9, "three searches at $0.01 each")

        let prompts = try store.runs.requests(runID: first.run.id).map {
            ($0.itemId, try $0.completionRequest())
        }
        let swift = try #require(prompts.first { $0.0 == "swift" }?.1)
        #expect(
            swift.messages.first?.content == "What is new with Swift?\n\nSearch the web for:\n- Swift news")
        #expect(swift.searchUses == 3)
        #expect(prompts.first { $0.0 == "lz4" }?.1.searchUses == 2)

        let index = try ResearchReuseTests.index(workspace, job: "news")
        let host = "https://search.offpeak-sim.invalid"
        let cited = Dictionary(uniqueKeysWithValues: index.items.map { ($0.id, $0.searchResults ?? []) })
        #expect(
            cited["swift"] == [
                SearchCitation(
                    url: "\(host)/swift-news/1", title: "Swift news (result 1)", query: "Swift news")
            ])
        #expect(
            cited["lz4"] == [
                SearchCitation(
                    url: "\(host)/lz4-release/1", title: "lz4 release (result 1)", query: "lz4 release"),
                SearchCitation(url: "\(host)/lz4-bugs/1", title: "lz4 bugs (result 1)", query: "lz4 bugs"),
            ])

        let report = try CostReport.make(store: store, by: .job)
        #expect(report.searches == CostReport.Searches(byModel: [model: 3], prices: .bundled))
        #expect(report.text.hasSuffix("\nweb searches: 3, \(Money.dollars(0.03)) of the cost above\n"))

        // Within the TTL both answers come from the cache, with the results they cited.
        let second = try CachedRunTests.run(workspace, job: "news")
        #expect(second.spend.calls == 0 && second.run.itemsCached == 2)
        let again = try ResearchReuseTests.index(workspace, job: "news")
        #expect(again.items.allSatisfy { $0.fromCache == true })
        #expect(
            Dictionary(uniqueKeysWithValues: again.items.map { ($0.id, $0.searchResults ?? []) }) == cited)
        #expect((try sim.stats()["billed"] as? [String: Any])?["web_search_requests"] as? Int == 3)
    }

    /// Through OpenAI's shape: `web_search_options` to a search model, one search billed a call at
    /// the bundled price, and the `url_citation` annotations kept (without a query: OpenAI does not
    /// say which found them). The job's temperature is left out: the sim, as OpenAI, refuses it.
    @Test func openAISearchModelsAreBilledOneSearchACall() throws {
        let sim = try SimProcess(arguments: ["--require-key", "sk-test"])
        let workspace = try Self.workspace(sim: sim, extra: "temperature: 0.2")
        let model = "gpt-4o-mini-search-preview"
        try workspace.write(
            "offpeak.yaml",
            "provider: openai\nbase_url: \(sim.url)/v1\nmodels: {openai: {balanced: \(model)}}\n")
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root),
            environment: try workspace.environment(["OPENAI_API_KEY": "sk-test"]),
            logger: Logger(label: "test"))
        let outcome = try context.run(try context.loadJob("news"))
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.spend.calls == 2)
        #expect((try sim.billed())["web_search_requests"] == 2)
        let store = try workspace.openStore()
        #expect(try store.ledger.searchesByModel() == [model: 2])
        let price = try #require(PriceTable.bundled.cost(of: model))
        #expect(price.perSearch == 0.0275)
        let tokens = price.dollars(
            for: Usage(
                input: outcome.spend.inputTokens, output: outcome.spend.outputTokens,
                cacheRead: outcome.spend.cacheReadTokens, cacheWrite: outcome.spend.cacheWriteTokens),
            lane: .live)
        #expect(abs(outcome.spend.dollars - (tokens + 2 * 0.0275)) < 1e-9, "one search a call at $0.0275")
        #expect(
            try CostReport.make(store: store, by: .job).text.hasSuffix(
                "\nweb searches: 2, \(Money.dollars(0.055)) of the cost above\n"))
        let requests = try store.runs.requests(runID: outcome.run.id).map { try $0.completionRequest() }
        #expect(requests.allSatisfy { $0.temperature == 0.2 }, "kept in the request, and its cache key")
        let index = try ResearchReuseTests.index(workspace, job: "news")
        #expect(
            index.items.first { $0.id == "swift" }?.searchResults == [
                SearchCitation(
                    url: "https://search.offpeak-sim.invalid/swift-news/1", title: "Swift news (result 1)")
            ])
    }

    /// An item that searches rests on pages its prompt does not hold: it changed when its answer
    /// did, though its prompt is the same, and the digest is asked over it.
    @Test func anItemThatSearchesChangesWhenItsAnswerDoes() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(
            sim: sim, ttl: "0s", extra: "digest: {template: \"What changed?\\n{{changes}}\"}")
        let first = try CachedRunTests.run(workspace, job: "news")
        #expect(first.status == .ok, "\(first.message)")
        #expect(first.spend.calls == 3, "two items and the digest")
        // The day before, the search found other pages, and the answer was another.
        let sql =
            "UPDATE results SET text = 'Old news.' WHERE request_id IN "
            + "(SELECT id FROM requests WHERE item_id = 'swift' AND run_id = '\(first.run.id)')"
        if TestStore.onPostgres {
            _ = try workspace.psql(sql)
        } else {
            try workspace.openStore().sqlite.write { db in try db.execute(sql: sql) }
        }
        let second = try CachedRunTests.run(workspace, job: "news")
        #expect(second.spend.calls == 3, "asked again past the TTL, and the digest")
        #expect(
            try ResearchReuseTests.changes(workspace, job: "news") == [
                "swift": "changed", "lz4": "unchanged",
            ])
        let store = try workspace.openStore()
        let digest = try #require(
            try store.runs.requests(runID: second.run.id).first { $0.itemId == "#digest" }?
                .completionRequest()
                .messages.first?.content)
        #expect(digest.hasPrefix("What changed?\n<item id=\"swift\" change=\"changed\">"))
        #expect(!digest.contains("lz4"))
    }

    /// A budget holds back every search a call may run, so a call whose searches could overshoot
    /// it is never sent.
    @Test func aDollarBudgetCountsEverySearchACallMayRun() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, extra: "budget: {max_dollars: 0.025}")
        let outcome = try CachedRunTests.run(workspace, job: "news")
        #expect(outcome.spend.calls == 0)
        #expect(outcome.status == .temporaryFailure)
        #expect(outcome.message.contains("max_dollars"), "\(outcome.message)")
        #expect((try sim.stats()["calls"] as? Int) == 0)

        // Without the searches the same call fits.
        try workspace.write(
            "jobs/plain.yaml",
            "kind: research\ntemplate: 'What is new with {{item}}?'\nitems: [Swift]\nbudget: {max_dollars: 0.025}\n"
        )
        #expect(try CachedRunTests.run(workspace, job: "plain").spend.calls == 1)
    }

    @Test func anEstimateCountsTheSearchesAtMost() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim)
        let context = try Self.context(workspace)
        let estimate = try context.estimate(try context.loadJob("news"))
        #expect(estimate.live.calls == 2 && estimate.live.searches == 5)
        #expect(estimate.naive.searches == 5)
        let lines = estimate.text.split(separator: "\n").map(String.init)
        #expect(lines.contains("web searches: up to 5 (each call's max_uses), priced at most in COST"))
        let price = try #require(PriceTable.bundled.cost(of: "claude-sonnet-4-5"))
        #expect(estimate.live.dollars > price.searchDollars(5))
    }

    /// A model the price table gives no price per search cannot be held to a dollar budget: the
    /// job refuses to start, as for a model with no price at all.
    @Test func aDollarBudgetNeedsAPricePerSearch() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, extra: "budget: {max_dollars: 5}")
        try workspace.write(
            "prices.json",
            #"{"claude-sonnet-4-5": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05}}"#)
        try workspace.write(
            "offpeak.yaml",
            "provider: sim\nbase_url: \(sim.url)\nprices: prices.json\nhttp: {max_retries: 1}\n")
        #expect {
            _ = try CachedRunTests.run(workspace, job: "news")
        } throws: { error in
            guard let error = error as? OffpeakError else { return false }
            return error.status == .configuration
                && error.description.contains(
                    "has no price per search, so the budget could not stop its searches")
        }
    }
}
