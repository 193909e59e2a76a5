import Foundation
import Testing

@testable import Offpeak

struct PriceTableTests {
    func close(_ actual: Double, _ expected: Double) -> Bool {
        abs(actual - expected) < 1e-9
    }

    @Test func bundledTableHasEveryShippedModel() throws {
        let names = [
            "claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-1", "claude-opus-4-5", "gpt-4o-mini",
            "gpt-4.1",
            "gpt-4.1-mini", "o3", "gpt-5", "gpt-5-mini", "deepseek-flash", "deepseek-v4-pro",
            "llama-3.1-8b-instant",
            "llama-3.3-70b-versatile", "mistral-small-latest", "mistral-medium-latest",
            "mistral-large-latest",
        ]
        for name in names { #expect(PriceTable.bundled.models[name] != nil, "\(name)") }
        // Each provider's own prices decode in full, and each prices the models of its tiers.
        for provider in ProviderRegistry.builtIn {
            let table = try PriceTable.decode(Data(provider.prices.utf8), source: provider.name)
            let tiers = provider.capabilities.models
            for model in [tiers.fast, tiers.balanced, tiers.powerful] {
                #expect(table.price(for: model) != nil, "\(provider.name): \(model)")
            }
        }
        #expect(PriceTable.bundled.models.count == 22)
        let opus = try #require(PriceTable.bundled.price(for: "claude-opus-4-1"))
        #expect(opus.maxInputTokens == 200_000 && opus.maxOutputTokens == 32_000)
        let gpt5 = try #require(PriceTable.bundled.price(for: "gpt-5"))
        #expect(gpt5.maxInputTokens == 272_000 && gpt5.maxOutputTokens == 128_000)
    }

    @Test func exactDollarsForKnownUsage() throws {
        let sonnet = try #require(PriceTable.bundled.price(for: "claude-sonnet-4-5"))
        let usage = Usage(input: 1_000_000, output: 100_000, cacheRead: 2_000_000, cacheWrite: 400_000)
        // 1M x $3 + 0.1M x $15 + 2M x $0.30 + 0.4M x $3.75
        #expect(close(sonnet.dollars(for: usage, lane: .live), 3 + 1.5 + 0.6 + 1.5))
        // Batch halves every part, cache included.
        #expect(close(sonnet.dollars(for: usage, lane: .batch), (3 + 1.5 + 0.6 + 1.5) / 2))
        // Naively every input token is billed at $3 and nothing is discounted.
        #expect(close(sonnet.naiveDollars(for: usage), 3.4 * 3 + 1.5))
    }

    @Test func openAICachedReadsAreDiscounted() throws {
        let mini = try #require(PriceTable.bundled.price(for: "gpt-4o-mini"))
        let usage = Usage(input: 1_000_000, output: 1_000_000, cacheRead: 1_000_000)
        #expect(close(mini.dollars(for: usage, lane: .live), 0.15 + 0.60 + 0.075))
        #expect(close(mini.naiveDollars(for: usage), 0.30 + 0.60))
    }

    @Test func missingCachePricesAreDerived() {
        let anthropic = ModelPrice(
            inputCostPerToken: 2e-6, outputCostPerToken: 0, litellmProvider: "anthropic")
        let other = ModelPrice(inputCostPerToken: 2e-6, outputCostPerToken: 0, litellmProvider: "openai")
        let usage = Usage(cacheRead: 1_000_000, cacheWrite: 1_000_000)
        #expect(close(anthropic.dollars(for: usage, lane: .live), 2 * 1.25 + 2 * 0.1))
        #expect(close(other.dollars(for: usage, lane: .live), 4))
        // No batch prices: half the live ones, as both providers bill their batch APIs (issue 12).
        #expect(close(other.dollars(for: usage, lane: .batch), 2))
        #expect(!other.hasBatchPrices && !anthropic.hasBatchPrices)
    }

    @Test func lookupStripsProviderPrefixAndDate() {
        let table = PriceTable.bundled
        let sonnet = table.models["claude-sonnet-4-5"]
        #expect(sonnet != nil)
        #expect(table.price(for: "claude-sonnet-4-5-20250929") == sonnet)
        #expect(table.price(for: "anthropic/claude-sonnet-4-5") == sonnet)
        #expect(table.price(for: "anthropic/claude-sonnet-4-5-20250929") == sonnet)
        #expect(table.price(for: "gpt-4o-mini-2024-07-18") == table.models["gpt-4o-mini"])
        #expect(table.price(for: "llama-3-8b") == nil)
    }

    @Test func aDateSuffixIsEightDigitsOrAnISODateAfterAName() {
        #expect(PriceTable.withoutDate("claude-sonnet-4-5-20250929") == "claude-sonnet-4-5")
        #expect(PriceTable.withoutDate("gpt-4o-mini-2024-07-18") == "gpt-4o-mini")
        #expect(PriceTable.withoutDate("model-2025092") == "model-2025092", "seven digits")
        #expect(PriceTable.withoutDate("model-2025-0718") == "model-2025-0718")
        #expect(PriceTable.withoutDate("model20250929") == "model20250929", "no dash")
        #expect(PriceTable.withoutDate("-20250929") == "-20250929", "nothing before it")
        #expect(PriceTable.withoutDate("mödel-2025-07-18") == "mödel")
        #expect(PriceTable.withoutDate("model-2025-07-1x") == "model-2025-07-1x")
    }

    @Test func overrideFileMergesOverBundled() throws {
        let json = """
            {
              "sample_spec": {"max_tokens": "set to max_output_tokens", "input_cost_per_token": 0.0},
              "claude-haiku-4-5": {"input_cost_per_token": 2e-06, "output_cost_per_token": 1e-05,
                                   "litellm_provider": "anthropic", "supports_vision": true},
              "my-local-model": {"input_cost_per_token": 0, "output_cost_per_token": 0, "mode": "chat"}
            }
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "prices-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let merged = PriceTable.bundled.merging(try PriceTable.load(file: file))
        #expect(merged.price(for: "claude-haiku-4-5")?.inputCostPerToken == 2e-06)
        #expect(merged.price(for: "my-local-model")?.mode == "chat")
        #expect(merged.price(for: "gpt-5") == PriceTable.bundled.price(for: "gpt-5"))
        #expect(merged.models["sample_spec"] == nil)
    }

    @Test func badOverrideFileNamesFileAndKey() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bad-\(UUID().uuidString).json")
        try Data(#"{"gpt-x": {"input_cost_per_token": "cheap"}}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            _ = try PriceTable.load(file: file)
            Issue.record("expected an error")
        } catch {
            #expect(error.status == .configuration)
            #expect(error.location == file.path + ":1:36", "the line and column of the bad value")
            #expect(error.description.contains("gpt-x"))
            #expect(error.description.contains("input_cost_per_token"))
        }
        let missing = file.appendingPathExtension("missing")
        #expect(throws: OffpeakError.self) { try PriceTable.load(file: missing) }
        try Data("[1, 2]".utf8).write(to: file)
        #expect(throws: OffpeakError.self) { try PriceTable.load(file: file) }
    }
}
