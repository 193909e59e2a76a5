import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 50, item 3: Mistral as a provider, with its batch jobs (`/v1/batch/jobs`, its own shape) as
/// the batch lane at half price. offpeak-sim speaks it under `/mistral/v1`, refusing a field Mistral
/// does not know with a 422 as Mistral does (checked by the `mistralai` SDK in
/// `scripts/mistral_sdk_check.py`).
@Suite(.ownThreads, .serialized) struct MistralTests {
    @Test func aCallCarriesOnlyMistralsFieldsAndItsJobsStatesReadAsBothAPIs() throws {
        var request = CompletionRequest(
            model: "mistral-small-latest", system: "Answer in JSON.",
            messages: [.init(role: .user, content: "hi")], maxTokens: 100)
        request.answerKeys = ["a", "b"]
        request.temperature = 0
        let body = try MistralProvider.requestBody(for: request)
        let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(Set(json.keys) == ["model", "messages", "max_tokens", "temperature", "response_format"])
        #expect((json["response_format"] as? [String: Any])?["type"] as? String == "json_schema")
        #expect(throws: ProviderError.self) { try MistralProvider.requestBody(for: request, lane: .flex) }

        let mistral = ProviderKind.mistral
        #expect(mistral.capabilities.environment.key == "MISTRAL_API_KEY")
        let made = mistral.make(
            apiKey: "k", baseURL: MistralProvider.defaultBaseURL, options: ProviderOptions(),
            logger: Logger(label: "test"))
        #expect(made.batches is MistralBatches && made.kind == .mistral)

        func job(_ status: String, output: String? = nil) throws -> RemoteBatch {
            let text = """
                {"id": "j1", "object": "batch", "input_files": ["f"], "endpoint": "/v1/chat/completions",
                 "errors": [{"message": "bad line 3", "count": 1}], "status": "\(status)", "created_at": 1795000000,
                 "total_requests": 10, "completed_requests": 6, "succeeded_requests": 5, "failed_requests": 1,
                 "completed_at": 1795000100, "metadata": {"offpeak_batch": "b7"},
                 "output_file": \(output.map { "\"\($0)\"" } ?? "null"), "error_file": null}
                """
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return try decoder.decode(MistralBatches.Job.self, from: Data(text.utf8))
                .remote(redactor: Redactor(environment: [:]))
        }
        let running = try job("RUNNING")
        #expect(running.phase == .inProgress && running.counts.processing == 4 && running.label == "b7")
        #expect(running.endedAt == nil)
        #expect(try job("CANCELLATION_REQUESTED").phase == .canceling)
        let timedOut = try job("TIMEOUT_EXCEEDED", output: "out")
        #expect(timedOut.phase == .ended && timedOut.counts.expired == 4 && timedOut.outputFileID == "out")
        #expect(timedOut.failure == nil && timedOut.endedAt == Date(timeIntervalSince1970: 1_795_000_100))
        #expect(try job("CANCELLED").counts.canceled == 4)
        #expect(try job("FAILED").failure == "bad line 3")
    }

    /// The batch lane end to end: uploaded, created as a job, collected by the next tick, every
    /// answer booked once at half Mistral's price, equal to what the sim billed, and the answers the
    /// live lane gives, which are booked at the full price as the sim billed them.
    @Test func aMistralBatchJobIsCollectedAndBookedAtHalfPrice() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let workspace = try BatchLaneTests.workspace(sim, count: 30, provider: "mistral")
        let key = BatchLaneTests.keys["mistral"] ?? [:]
        #expect(try workspace.offpeak(["run", "classify"], environment: key).status == 75)
        let store = try workspace.openStore()
        let batch = try #require(try store.batches.openBatches().first)
        #expect(batch.provider == "mistral" && batch.model == "mistral-medium-latest" && batch.items == 30)

        BatchLaneTests.waitForTheBatchToEnd()
        let tick = try workspace.offpeak(["tick"], environment: key)
        #expect(
            tick.stdout == "classify [resume]: job classify: 30 of 30 items answered (30 now)\n",
            "\(tick.stderr)")
        #expect(try BatchLaneTests.batchCounts(sim)["created"] == 1)
        let billed = try BatchLaneTests.simBilledDollars(sim, model: batch.model)
        #expect(billed > 0)
        #expect(abs(try BatchLaneTests.ledgerDollars(store) - billed) < 1e-12)

        let liveSim = try SimProcess()
        let live = try BatchLaneTests.workspace(liveSim, count: 30, lane: "live", provider: "mistral")
        #expect(try live.offpeak(["run", "classify"], environment: key).status == 0)
        #expect(BatchLaneTests.answers(workspace).count == 30)
        #expect(BatchLaneTests.answers(workspace) == BatchLaneTests.answers(live))
        let liveBilled = try #require(liveSim.stats()["billed"] as? [String: Int])
        let price = try #require(PriceTable.bundled.cost(of: batch.model))
        let liveDollars = price.dollars(
            for: Usage(input: liveBilled["input_tokens"] ?? 0, output: liveBilled["output_tokens"] ?? 0),
            lane: .live)
        #expect(abs(try BatchLaneTests.ledgerDollars(try live.openStore()) - liveDollars) < 1e-12)
        #expect(abs(billed * 2 - liveDollars) < 1e-12)
    }
}
