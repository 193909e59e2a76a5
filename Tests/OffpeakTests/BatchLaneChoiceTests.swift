import Foundation
import Logging
import Testing

@testable import Offpeak

/// Which lane a pass takes (`BatchLane.choose`) and the `lane` field that asks for one.
struct BatchLaneChoiceTests {
    static let day: TimeInterval = 24 * 3600
    let now = Date()

    static func spec(lane: JobSpec.Lane?, deadline: TimeInterval? = nil) throws -> JobSpec {
        var spec = try JobSpecParser.parse(
            yaml: "kind: prompt\nitems: [a]\ntemplate: \"{{item}}\"\n", path: "jobs/j.yaml",
            workspace: FileManager.default.temporaryDirectory)
        spec.lane = lane
        spec.deadline = deadline
        return spec
    }

    static let sim = AnthropicProvider(
        apiKey: "sim", baseURL: "http://127.0.0.1:8089", kind: .sim, logger: Logger(label: "test"))
    static let anthropic = AnthropicProvider(apiKey: "k", logger: Logger(label: "test"))
    /// An OpenAI-compatible server on this machine (llama.cpp, Ollama): no batch API to use.
    static let localServer = OpenAIProvider(
        apiKey: "k", baseURL: "http://127.0.0.1:8080/v1", logger: Logger(label: "test"))

    func choose(
        _ spec: JobSpec, workspace: JobSpec.Lane = .auto, provider: any CompletionProvider = Self.anthropic,
        deadlineAt: Date? = nil, batchAPI: Bool? = nil
    ) -> Bool {
        BatchLane.choose(
            spec: spec, workspaceLane: workspace, batchAPI: batchAPI, provider: provider,
            deadlineAt: deadlineAt,
            now: now
        ).api != nil
    }

    @Test func autoGoesThroughBatchesForADeadlineOfADayOrMoreOrWhenTheWorkspaceSaysSo() throws {
        #expect(!choose(try Self.spec(lane: nil)))
        #expect(!choose(try Self.spec(lane: .auto, deadline: Self.day - 1), deadlineAt: now + Self.day - 1))
        #expect(choose(try Self.spec(lane: nil, deadline: 2 * Self.day), deadlineAt: now + 2 * Self.day))
        #expect(choose(try Self.spec(lane: nil), workspace: .batch))
        #expect(!choose(try Self.spec(lane: nil, deadline: 2 * Self.day), workspace: .live))
        #expect(choose(try Self.spec(lane: nil, deadline: 2 * Self.day), provider: Self.sim))
        #expect(!choose(try Self.spec(lane: nil, deadline: 2 * Self.day), provider: Self.localServer))
    }

    @Test func liveAndBatchAreTakenAsAskedUnlessTheDeadlineLeavesNoTimeForABatch() throws {
        #expect(!choose(try Self.spec(lane: .live, deadline: 3 * Self.day), workspace: .batch))
        #expect(choose(try Self.spec(lane: .batch)))
        // OpenAI's Batch API is OpenAI's: a server that speaks its chat completions has it only when
        // offpeak.yaml declares it (`batch_api: true`); `batch_api: false` closes Anthropic's.
        #expect(!choose(try Self.spec(lane: .batch), provider: Self.localServer))
        #expect(choose(try Self.spec(lane: .batch), provider: Self.localServer, batchAPI: true))
        #expect(!choose(try Self.spec(lane: .batch), batchAPI: false))
        let close = BatchLane.choose(
            spec: try Self.spec(lane: .batch, deadline: 3 * Self.day), workspaceLane: .auto,
            provider: Self.anthropic, deadlineAt: now + 24 * 3600, now: now)
        #expect(close.api == nil)
        #expect(close.why?.hasSuffix("leaves no time for a batch; calls go live") == true)
        #expect(choose(try Self.spec(lane: .batch), deadlineAt: now + 25 * 3600 + 1))
    }

    @Test func aLaneThatIsNoneOfTheThreeIsRefusedWhereItIsWritten() {
        do {
            _ = try JobSpecParser.parse(
                yaml: "kind: prompt\nitems: [a]\ntemplate: \"{{item}}\"\nlane: overnight\n",
                path: "jobs/j.yaml",
                workspace: FileManager.default.temporaryDirectory)
            Issue.record("lane: overnight was accepted")
        } catch {
            #expect(error.status == .dataError)
            #expect(error.location == "jobs/j.yaml:4:7")
            #expect(error.message.hasPrefix("lane: "), "\(error)")
            #expect(error.message.contains("live, batch, flex, auto"), "\(error)")
        }
    }

    @Test func batchPollsComeSoonForAYoungBatchAndSeldomForAnOldOne() {
        #expect(BatchLane.nextPoll(submittedAt: now, now: now) == now + 2)
        #expect(BatchLane.nextPoll(submittedAt: now - 600, now: now) == now + 60)
        #expect(BatchLane.nextPoll(submittedAt: now - 20 * 3600, now: now) == now + 15 * 60)
    }
}
