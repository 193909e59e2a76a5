import Foundation
import Testing

@testable import Offpeak
@testable import OffpeakSimKit

/// `cache_control` goes on the wire only where the model would cache the prefix: at or above its
/// documented minimum, and only for Claude models.
struct PromptCacheMinimumTests {
    /// A system prompt of exactly `tokens` tokens (`TokenEstimator`: four bytes a token).
    static func system(tokens: Int) -> String {
        String(repeating: "abcd", count: tokens)
    }

    static func body(model: String, system: String, cache: Bool = true) throws -> [String: Any] {
        let request = CompletionRequest(
            model: model, system: system, messages: [ChatMessage(role: .user, content: "Hi")], maxTokens: 50,
            cacheSystemPrompt: cache)
        let data = try AnthropicProvider.requestBody(for: request)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test(arguments: [
        ("claude-haiku-4-5", 4095), ("claude-haiku-4-5-20251001", 1500), ("claude-opus-4-5", 4095),
        ("claude-sonnet-4-5", 1023), ("claude-3-5-haiku-20241022", 2047), ("claude-opus-4-1", 1023),
    ])
    func belowTheModelsMinimumTheSystemIsAPlainString(model: String, tokens: Int) throws {
        let system = Self.system(tokens: tokens)
        let plain = try Self.body(model: model, system: system)["system"] as? String == system
        #expect(plain, "the system prompt goes as a plain string")
    }

    @Test(arguments: [
        ("claude-haiku-4-5", 4096), ("claude-opus-4-5-20251101", 5000), ("claude-sonnet-4-5", 1024),
        ("claude-3-haiku-20240307", 2048), ("claude-opus-4-20250514", 1024), ("claude-opus-4-7", 1024),
    ])
    func atOrAboveTheMinimumTheSystemIsOneCachedBlock(model: String, tokens: Int) throws {
        let system = Self.system(tokens: tokens)
        let blocks = try #require(try Self.body(model: model, system: system)["system"] as? [[String: Any]])
        #expect(blocks.count == 1)
        let text = blocks.first?["type"] as? String == "text" && blocks.first?["text"] as? String == system
        #expect(text, "one text block holding the whole system prompt")
        #expect(blocks.first?["cache_control"] as? [String: String] == ["type": "ephemeral"])
    }

    @Test(arguments: ["qwen2.5-0.5b-instruct", "local-model", "gpt-4o-mini", "llama.cpp/gguf"])
    func aModelThatIsNotClaudeNeverGetsBlocks(model: String) throws {
        let system = Self.system(tokens: 20_000)
        let plain = try Self.body(model: model, system: system)["system"] as? String == system
        #expect(plain, "the system prompt goes as a plain string")
    }

    @Test func aJobWithoutPromptCacheIsNeverMarked() throws {
        let system = Self.system(tokens: 5000)
        let plain =
            try Self.body(model: "claude-sonnet-4-5", system: system, cache: false)["system"] as? String
            == system
        #expect(plain, "the system prompt goes as a plain string")
    }

    @Test func providerSpellingsOfAModelNameFindItsFamily() {
        #expect(PromptCacheMinimum.tokens(for: "anthropic.claude-haiku-4-5-20251001-v1:0") == 4096)
        #expect(PromptCacheMinimum.tokens(for: "claude-3-5-haiku@20241022") == 2048)
        #expect(PromptCacheMinimum.tokens(for: "anthropic/claude-sonnet-4.5") == 1024)
        #expect(PromptCacheMinimum.tokens(for: "Claude-Opus-4-6") == 4096)
        #expect(PromptCacheMinimum.tokens(for: "claude-3-5-sonnet-v2@20241022") == 1024)
        #expect(PromptCacheMinimum.tokens(for: "claude-future-9") == PromptCacheMinimum.unlistedClaude)
        #expect(PromptCacheMinimum.tokens(for: "mistral-small") == nil)
    }

    /// offpeak marks what the sim (standing in for Anthropic) caches, so a marked prefix is never
    /// billed as plain input by a sim with its default `--cache-min-tokens`.
    @Test(arguments: [
        "claude-haiku-4-5", "claude-haiku-4-5-20251001", "claude-opus-4-6", "claude-opus-4-5-20251101",
        "claude-opus-4-1", "claude-opus-4-20250514", "claude-sonnet-4-6", "claude-sonnet-4-5",
        "claude-sonnet-4-20250514", "claude-3-7-sonnet-latest", "claude-3-5-sonnet-20241022",
        "claude-3-opus-20240229", "claude-3-5-haiku-latest", "claude-3-haiku-20240307", "claude-opus-4-7",
    ])
    func offpeakAndTheSimUseTheSameMinimum(model: String) {
        #expect(
            PromptCacheMinimum.tokens(for: model) == PromptCacheBook().minimum(api: .anthropic, model: model))
    }
}
