import Foundation
import OffpeakSimKit
import OffpeakTestSupport
import Testing

/// Anthropic applies prompt caching inside Message Batches (the discounts stack): the built
/// `offpeak-sim` bills a batch request's `cache_control` prefix as its live endpoint does, from the
/// same prompt cache.
@Suite(.ownThreads) struct SimBatchPromptCacheTests {
    /// A system prompt well over the sim's 1,024-token minimum for caching.
    let system = String(repeating: "Classify the ticket as billing, bug or other. ", count: 120)
    let prompts = ["ticket one: my invoice is wrong", "ticket two: the app crashes", "ticket three: hello"]

    private func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func call(_ sim: SimProcess, _ method: String, _ path: String, _ body: Any? = nil) throws
        -> [String: Any]
    {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        return try object(try sim.request(method, path, body: data))
    }

    private func params(_ prompt: String) -> [String: Any] {
        [
            "model": "m", "max_tokens": 50,
            "system": [["type": "text", "text": system, "cache_control": ["type": "ephemeral"]]],
            "messages": [["role": "user", "content": prompt]],
        ]
    }

    private func counters(_ value: Any?) -> [String: Int] {
        (value as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.intValue }
    }

    @Test func anthropicBatchWritesTheMarkedPrefixOnceAndReadsItAfter() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "0"])
        let requests = prompts.enumerated().map { ["custom_id": "req-\($0)", "params": params($1)] }
        let id = try #require(
            try call(sim, "POST", "/v1/messages/batches", ["requests": requests])["id"] as? String)
        var batch: [String: Any] = [:]
        for _ in 0..<100 where batch["processing_status"] as? String != "ended" {
            batch = try call(sim, "GET", "/v1/messages/batches/\(id)")
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(batch["processing_status"] as? String == "ended")
        let text = String(
            decoding: try sim.request("GET", "/v1/messages/batches/\(id)/results"), as: UTF8.self)
        let usages = try text.split(separator: "\n").map { line in
            let result = try #require(try object(Data(line.utf8))["result"] as? [String: Any])
            let message = try #require(result["message"] as? [String: Any])
            return counters(message["usage"])
        }
        #expect(usages.count == 3)
        let writes = usages.filter { ($0["cache_creation_input_tokens"] ?? 0) > 0 }
        let reads = usages.filter { ($0["cache_read_input_tokens"] ?? 0) > 0 }
        let prefix = try #require(writes.first?["cache_creation_input_tokens"])
        #expect(prefix >= 1024)
        #expect(writes.count == 1 && writes.first?["cache_read_input_tokens"] == 0)
        #expect(reads.count == 2 && reads.allSatisfy { $0["cache_read_input_tokens"] == prefix })
        #expect(reads.allSatisfy { $0["cache_creation_input_tokens"] == 0 })

        let billed = counters(try sim.stats()["billed_batch"])
        for key in [
            "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
        ] {
            #expect(billed[key] == usages.reduce(0) { $0 + ($1[key] ?? 0) }, "billed_batch \(key)")
        }
        #expect(billed["cache_read_input_tokens"] == 2 * prefix)
        #expect(counters(try sim.stats()["billed"]).values.allSatisfy { $0 == 0 }, "nothing billed live")

        // The batch and the live endpoint share one prompt cache, as they share one provider.
        let live = try call(sim, "POST", "/v1/messages", params("ticket four: a live call"))
        #expect(counters(live["usage"])["cache_read_input_tokens"] == prefix)
    }
}
