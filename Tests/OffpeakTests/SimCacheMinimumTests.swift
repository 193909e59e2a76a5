import Foundation
import OffpeakTestSupport
import Testing

/// The built `offpeak-sim` bills a `cache_control` prefix below the model's documented minimum as
/// plain input, live and in Message Batches, as Anthropic does.
@Suite(.ownThreads) struct SimCacheMinimumTests {
    /// About 1,500 tokens: over Sonnet 4.5's 1,024-token minimum, under Haiku 4.5's 4,096.
    let system = String(repeating: "Classify the ticket as billing, bug or other. ", count: 128)

    private func usage(_ sim: SimProcess, model: String, prompt: String) throws -> [String: Int] {
        let body: [String: Any] = [
            "model": model, "max_tokens": 50,
            "system": [["type": "text", "text": system, "cache_control": ["type": "ephemeral"]]],
            "messages": [["role": "user", "content": prompt]],
        ]
        let data = try sim.request(
            "POST", "/v1/messages", body: try JSONSerialization.data(withJSONObject: body))
        let answer = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return (answer["usage"] as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.intValue }
    }

    @Test func aMarkedPrefixBelowTheMinimumIsBilledAsInput() throws {
        let sim = try SimProcess()
        let prefix = (system.utf8.count + 3) / 4
        for prompt in ["ticket one", "ticket two"] {
            let usage = try usage(sim, model: "claude-haiku-4-5", prompt: prompt)
            #expect(usage["cache_creation_input_tokens"] == 0 && usage["cache_read_input_tokens"] == 0)
            #expect(usage["input_tokens"] == prefix + (prompt.utf8.count + 3) / 4)
        }
        let first = try usage(sim, model: "claude-sonnet-4-5", prompt: "ticket one")
        let second = try usage(sim, model: "claude-sonnet-4-5", prompt: "ticket two")
        #expect(first["cache_creation_input_tokens"] == prefix)
        #expect(second["cache_read_input_tokens"] == prefix)
        let billed = try sim.billed()
        #expect(
            billed["cache_creation_input_tokens"] == prefix && billed["cache_read_input_tokens"] == prefix)
    }
}
