import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// What the tests of each provider's batch API (`AnthropicBatchesTests`, `OpenAIBatchesTests`,
/// `GeminiBatchesTests`) share: the prompts, their requests under a label, the options of a
/// provider that must never print its key, waiting for a batch to end, a search for a label, and
/// how many batches the sim was asked to create.
struct BatchAPIFixture {
    /// The key every provider of these tests sends, redacted from whatever it prints.
    let key: String
    var model = "m"
    var prompts = ["Hi there.", "What is the capital of France? Explain briefly.", "Hello.", "Say yes."]

    /// No retries unless asked, no sleeping between them, and the key redacted.
    func options(retries: Int = 0, timeout: TimeInterval = 30) -> ProviderOptions {
        ProviderOptions(
            requestTimeout: timeout, retryPolicy: RetryPolicy(maxRetries: retries), sleep: { _ in },
            redactor: Redactor(secrets: [key]))
    }

    func request(_ prompt: String) -> CompletionRequest {
        CompletionRequest(model: model, messages: [ChatMessage(role: .user, content: prompt)], maxTokens: 100)
    }

    /// The prompts (or `prompts`) as requests whose custom ids are `<label>_<place>`.
    func batch(_ label: String, _ prompts: [String]? = nil) -> [BatchRequest] {
        (prompts ?? self.prompts).enumerated().map {
            BatchRequest(customID: "\(label)_\($0)", request: request($1))
        }
    }

    /// The batch once it has ended (or as it is after 20 seconds).
    func ended(_ api: any BatchAPI, _ id: String) throws -> RemoteBatch {
        var batch = try api.retrieve(id)
        for _ in 0..<400 where batch.phase != .ended {
            Thread.sleep(forTimeInterval: 0.05)
            batch = try api.retrieve(id)
        }
        return batch
    }

    /// A search for the batch of four requests labelled `label`, prepared at `prepared`.
    func search(_ label: String, prepared: Date, known: Set<String> = []) -> BatchSearch {
        BatchSearch(
            label: label, customIDPrefix: label + "_", requestCount: prompts.count, preparedAt: prepared,
            createdBy: Date() + 60, known: known)
    }

    /// How many batches the sim was asked to create.
    func created(_ sim: SimProcess) throws -> Int {
        let batches = try #require(try sim.stats()["batches"] as? [String: Any])
        return (batches["created"] as? NSNumber)?.intValue ?? -1
    }
}
