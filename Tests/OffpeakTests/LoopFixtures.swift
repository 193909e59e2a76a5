import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Values the run loop's pieces are tested with, without a server or a store.
enum LoopFixtures {
    static let haiku = PriceTable.bundled.price(for: "claude-haiku-4-5")
    static let line = LedgerLine(
        job: "j", runID: "j-1", provider: .sim, tier: "fast", downgraded: false, host: "test-host")
    static let t0 = Date(timeIntervalSince1970: 1_760_000_000)

    static func record(_ id: String, attempts: Int = 0, source: RequestSource = .spec) -> RequestRecord {
        RequestRecord(
            id: id, runId: "j-1", job: "j", itemId: "item-\(id)", position: 0, source: source, clientId: nil,
            tier: "fast", payload: "{}", cacheKey: "key-\(id)", state: .pending, attempts: attempts,
            nextAttemptAt: nil, error: nil, createdAt: t0, updatedAt: t0)
    }

    static func request(_ text: String = "Summarize this.", maxTokens: Int = 100) -> CompletionRequest {
        CompletionRequest(
            model: "claude-haiku-4-5", system: "You are brief.",
            messages: [ChatMessage(role: .user, content: text)],
            maxTokens: maxTokens)
    }

    /// One request sent alone.
    static func single(_ record: RequestRecord = record("r1"), maxTokens: Int = 100) -> PlannedCall {
        PlannedCall(
            requests: [record], itemIDs: [], itemTexts: ["Summarize this."],
            request: request(maxTokens: maxTokens))
    }

    /// Records packed into one batched prompt, with item ids i1, i2, ...
    static func batch(_ records: [RequestRecord], texts: [String]) -> PlannedCall {
        PlannedCall(
            requests: records, itemIDs: records.indices.map { "i\($0 + 1)" }, itemTexts: texts,
            request: request(texts.joined(separator: "\n"), maxTokens: 400))
    }

    static func response(_ text: String, finish: FinishReason = .stop, input: Int = 1000, output: Int = 200)
        -> CompletionResponse
    {
        CompletionResponse(
            text: text, finishReason: finish, usage: Usage(input: input, output: output),
            model: "claude-haiku-4-5")
    }

    static func conditions(_ fixture: String) -> MachineConditions {
        MachineConditions.read(sysfsRoot: SwitchableSysfs.fixtures.appendingPathComponent(fixture))
    }
}
