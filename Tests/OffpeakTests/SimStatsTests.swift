import Foundation
import Testing

@testable import OffpeakSimKit

struct SimStatsTests {
    @Test func countsCallsFaultsAndBilledTokens() {
        let stats = SimStats()
        stats.recordCall(.messages)
        stats.recordCall(.messages)
        stats.recordCall(.chatCompletions)
        stats.recordFault(.rateLimited)
        stats.recordAnswer(.messages, billed: BilledTokens(input: 10, output: 5, cacheCreation: 1200))
        stats.recordAnswer(.chatCompletions, billed: BilledTokens(input: 7, output: 3, cacheRead: 100))
        let snapshot = stats.snapshot()
        #expect(snapshot.calls == 3)
        #expect(snapshot.okCalls == 2)
        #expect(snapshot.faults["429"] == 1)
        #expect(snapshot.faults["truncate"] == 0)
        #expect(snapshot.billed == BilledTokens(input: 17, output: 8, cacheCreation: 1200, cacheRead: 100))
        #expect(snapshot.byEndpoint["messages"]?.calls == 2)
        #expect(snapshot.byEndpoint["chat_completions"]?.billed.cacheReadInputTokens == 100)
    }

    @Test func encodesTheDocumentedShape() throws {
        let stats = SimStats()
        stats.recordCall(.chatCompletions)
        stats.recordAnswer(.chatCompletions, billed: BilledTokens(input: 4, output: 2))
        let data = try JSONEncoder().encode(stats.snapshot())
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(
            Set(json.keys) == [
                "calls", "ok_calls", "faults", "billed", "by_endpoint", "batched_calls", "batched_items",
                "degraded_items", "damage", "sources", "flex_calls", "flex_refused", "flex_as_default",
                "billed_by_window",
            ])
        #expect(json["batched_calls"] as? Int == 0)
        #expect(json["degraded_items"] as? Int == 0)
        let damage = try #require(json["damage"] as? [String: Int])
        #expect(damage == ["drop": 0, "duplicate": 0, "garble": 0, "reorder": 0, "wrap": 0])
        let billed = try #require(json["billed"] as? [String: Int])
        #expect(
            billed == [
                "input_tokens": 4, "output_tokens": 2, "cache_creation_input_tokens": 0,
                "cache_creation_1h_input_tokens": 0, "cache_read_input_tokens": 0, "web_search_requests": 0,
            ])
        let byEndpoint = try #require(json["by_endpoint"] as? [String: [String: Int]])
        #expect(byEndpoint["chat_completions"]?["calls"] == 1)
        #expect(byEndpoint["chat_completions"]?["ok_calls"] == 1)
        #expect(byEndpoint["chat_completions"]?["input_tokens"] == 4)
        #expect(byEndpoint["messages"]?["calls"] == 0)
        #expect(try JSONDecoder().decode(StatsSnapshot.self, from: data) == stats.snapshot())
    }

    @Test func countsBatchedCallsItemsAndDamageWithTheAnswer() {
        let stats = SimStats()
        let billed = BilledTokens(input: 10, output: 20)
        stats.recordAnswer(.messages, billed: billed)
        stats.recordAnswer(
            .messages, billed: billed, batch: BatchTally(items: 8, damage: [.drop, .wrap], degraded: 5))
        stats.recordAnswer(
            .chatCompletions, billed: billed,
            batch: BatchTally(items: 3, damage: [.garble, .garble], degraded: 2))
        let snapshot = stats.snapshot()
        #expect(snapshot.okCalls == 3)
        #expect(snapshot.batchedCalls == 2)
        #expect(snapshot.batchedItems == 11)
        #expect(snapshot.degradedItems == 7)
        #expect(snapshot.damage == ["drop": 1, "duplicate": 0, "garble": 2, "reorder": 0, "wrap": 1])
        stats.reset()
        #expect(stats.snapshot().batchedCalls == 0)
        #expect(stats.snapshot().degradedItems == 0)
        #expect(stats.snapshot().damage.values.allSatisfy { $0 == 0 })
    }
}
