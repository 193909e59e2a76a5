import Testing

@testable import OffpeakSimKit

struct SimPromptCacheTests {
    let start = ContinuousClock.now
    let prefix = CacheablePrefix(text: "long system prompt", tokens: 1200)

    @Test func anthropicWritesThenReadsWithinTTL() {
        let book = PromptCacheBook(minTokens: 1024, ttl: .seconds(300))
        let first = book.bill(api: .anthropic, model: "m", inputTokens: 1250, prefix: prefix, now: start)
        #expect(first == InputBilling(uncached: 50, cacheCreation: 1200))
        let second = book.bill(
            api: .anthropic, model: "m", inputTokens: 1260, prefix: prefix, now: start + .seconds(200))
        #expect(second == InputBilling(uncached: 60, cacheRead: 1200))
        #expect(second.total == 1260)
    }

    @Test func hitsRefreshTheTTLAndExpiryWritesAgain() {
        let book = PromptCacheBook(minTokens: 1024, ttl: .seconds(300))
        _ = book.bill(api: .anthropic, model: "m", inputTokens: 1250, prefix: prefix, now: start)
        let refreshed = book.bill(
            api: .anthropic, model: "m", inputTokens: 1250, prefix: prefix, now: start + .seconds(250))
        #expect(refreshed.cacheRead == 1200)
        let stillWarm = book.bill(
            api: .anthropic, model: "m", inputTokens: 1250, prefix: prefix, now: start + .seconds(500))
        #expect(stillWarm.cacheRead == 1200)
        let expired = book.bill(
            api: .anthropic, model: "m", inputTokens: 1250, prefix: prefix, now: start + .seconds(801))
        #expect(expired == InputBilling(uncached: 50, cacheCreation: 1200))
    }

    @Test func shortOrMissingPrefixIsNeverCached() {
        let book = PromptCacheBook(minTokens: 1024, ttl: .seconds(300))
        let short = CacheablePrefix(text: "short", tokens: 1023)
        for _ in 0..<2 {
            #expect(
                book.bill(api: .anthropic, model: "m", inputTokens: 1100, prefix: short)
                    == InputBilling(uncached: 1100))
            #expect(
                book.bill(api: .openAI, model: "m", inputTokens: 1100, prefix: nil)
                    == InputBilling(uncached: 1100))
        }
    }

    @Test func aMarkedPrefixBelowTheModelsMinimumIsBilledAsInput() {
        let book = PromptCacheBook(minTokens: 1024, ttl: .seconds(300))
        let fewShot = CacheablePrefix(text: "few-shot examples", tokens: 1500)
        for model in ["claude-haiku-4-5", "claude-opus-4-5-20251101", "claude-3-5-haiku-latest"] {
            for _ in 0..<2 {
                #expect(
                    book.bill(api: .anthropic, model: model, inputTokens: 1600, prefix: fewShot, now: start)
                        == InputBilling(uncached: 1600))
            }
            #expect(book.wouldRead(api: .anthropic, model: model, inputTokens: 1600, prefix: fewShot) == 0)
        }
        let sonnet = book.bill(
            api: .anthropic, model: "claude-sonnet-4-5", inputTokens: 1600, prefix: fewShot, now: start)
        #expect(sonnet == InputBilling(uncached: 100, cacheCreation: 1500))
        let long = CacheablePrefix(text: "a long manual", tokens: 4096)
        _ = book.bill(api: .anthropic, model: "claude-haiku-4-5", inputTokens: 4100, prefix: long, now: start)
        #expect(
            book.bill(api: .anthropic, model: "claude-haiku-4-5", inputTokens: 4100, prefix: long, now: start)
                == InputBilling(uncached: 4, cacheRead: 4096))
    }

    @Test func openAIAndUnlistedModelsKeepTheConfiguredMinimum() {
        let book = PromptCacheBook(minTokens: 1024, ttl: .seconds(300))
        #expect(book.minimum(api: .openAI, model: "claude-haiku-4-5") == 1024)
        #expect(book.minimum(api: .anthropic, model: "m") == 1024)
        #expect(PromptCacheBook(minTokens: 2000).minimum(api: .anthropic, model: "claude-opus-4-7") == 2000)
        #expect(book.minimum(api: .anthropic, model: "claude-haiku-4-5") == 4096)
    }

    @Test func openAICachesAutomaticallyFromTheSecondCall() {
        let book = PromptCacheBook(minTokens: 1024, ttl: .seconds(300))
        let first = book.bill(api: .openAI, model: "gpt", inputTokens: 1250, prefix: prefix, now: start)
        #expect(first == InputBilling(uncached: 1250))
        let second = book.bill(
            api: .openAI, model: "gpt", inputTokens: 1250, prefix: prefix, now: start + .seconds(1))
        #expect(second == InputBilling(uncached: 50, cacheRead: 1200))
    }

    @Test func entriesAreKeyedByAPIModelAndText() {
        let book = PromptCacheBook(minTokens: 1024, ttl: .seconds(300))
        _ = book.bill(api: .anthropic, model: "a", inputTokens: 1250, prefix: prefix, now: start)
        let otherModel = book.bill(api: .anthropic, model: "b", inputTokens: 1250, prefix: prefix, now: start)
        #expect(otherModel.cacheCreation == 1200)
        let otherAPI = book.bill(api: .openAI, model: "a", inputTokens: 1250, prefix: prefix, now: start)
        #expect(otherAPI.cacheRead == 0)
        let otherText = CacheablePrefix(text: "another prompt", tokens: 1200)
        #expect(
            book.bill(api: .anthropic, model: "a", inputTokens: 1250, prefix: otherText, now: start).cacheRead
                == 0)
        book.reset()
        #expect(
            book.bill(api: .anthropic, model: "a", inputTokens: 1250, prefix: prefix, now: start).cacheRead
                == 0)
    }

    @Test func anthropicPrefixRunsThroughTheLastMarkedBlock() {
        let conversation = SimConversation(
            system: [.init(text: "abcd"), .init(text: "efgh", cacheMarked: true), .init(text: "ijkl")],
            messages: [.init(role: "user", texts: ["hi"])])
        #expect(conversation.markedSystemPrefix?.tokens == 2)
        #expect(conversation.systemPrefix?.tokens == 3)
        #expect(SimConversation(system: [.init(text: "x")], messages: []).markedSystemPrefix == nil)
    }
}
