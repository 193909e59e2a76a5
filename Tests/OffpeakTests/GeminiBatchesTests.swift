import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Gemini's Batch Mode over libcurl against the built `offpeak-sim`: inlined requests, responses
/// matched to their keys (by place, as the API gives no `metadata` back), every kind of result,
/// cancel, a batch found again by its `displayName`, and a job's batch lane end to end.
@Suite(.ownThreads) struct GeminiBatchesTests {
    static let key = "gemini-batch-test-secret-7d1e"
    let fixture = BatchAPIFixture(key: Self.key, model: "gemini-2.5-flash")
    var prompts: [String] { fixture.prompts }

    func api(_ sim: SimProcess) -> GeminiBatches {
        let provider = GeminiProvider(
            apiKey: Self.key, baseURL: sim.url, options: fixture.options(), logger: Logger(label: "t"))
        return GeminiBatches(
            baseURL: sim.url,
            exchange: BatchExchange(transport: provider.transport, headers: provider.headers))
    }

    func request(_ prompt: String) -> CompletionRequest { fixture.request(prompt) }

    /// Custom ids whose order by name is not the order they are given in.
    func batch(_ label: String) -> [BatchRequest] { fixture.batch(label).reversed() }

    func ended(_ api: GeminiBatches, _ id: String) throws -> RemoteBatch { try fixture.ended(api, id) }

    @Test(.timeLimit(.minutes(1))) func responsesMatchedByPlaceEqualTheLiveAnswers() throws {
        let sim = try SimProcess(arguments: ["--require-key", Self.key, "--batch-delay", "1"])
        let live = GeminiProvider(apiKey: Self.key, baseURL: sim.url, logger: Logger(label: "t"))
        let answers = try prompts.map { try live.complete(request($0)) }
        let api = api(sim)
        let requests = batch("g1")
        let created = try api.create(label: "g1", requests: requests)
        #expect(created.id.hasPrefix("batches/") && created.phase == .inProgress)
        #expect(created.label == "g1" && created.createdAt != nil)
        let done = try ended(api, created.id)
        #expect(done.status == "BATCH_STATE_SUCCEEDED" && done.counts == RemoteBatch.Counts(succeeded: 4))
        let sent = Dictionary(uniqueKeysWithValues: requests.map { ($0.customID, $0.request) })
        let results = try api.results(of: done, requests: sent)
        #expect(results.map(\.customID) == ["g1_0", "g1_1", "g1_2", "g1_3"])
        for result in results {
            let index = try #require(Int(result.customID.dropFirst(3)))
            guard case .succeeded(var answer) = result.outcome else {
                Issue.record("\(result.customID): \(result.outcome)")
                continue
            }
            answer.id = answers[index].id  // each answer has its own
            #expect(answer == answers[index])
        }
        // Without the requests sent, there is nothing to match by place.
        #expect(throws: ProviderError.self) { try api.results(of: done, requests: [:]) }
    }

    @Test(.timeLimit(.minutes(1))) func erroredExpiredAndCanceledResultsAreMapped() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "0"])
        let faults = try JSONSerialization.data(
            withJSONObject: ["errored": ["e1_0"], "expired": ["e1_1"], "canceled": ["e1_2"]])
        _ = try sim.request("POST", "/sim/batch-faults", body: faults)
        let api = api(sim)
        var requests = batch("e1")
        requests[0].request.messages = []  // e1_3, refused as invalid
        let done = try ended(api, try api.create(label: "e1", requests: requests).id)
        let sent = Dictionary(uniqueKeysWithValues: requests.map { ($0.customID, $0.request) })
        let outcomes = Dictionary(
            uniqueKeysWithValues: try api.results(of: done, requests: sent).map { ($0.customID, $0.outcome) })
        #expect(outcomes["e1_0"] == .errored("HTTP 500: offpeak-sim: simulated batch request error"))
        #expect(outcomes["e1_1"] == .expired)
        #expect(outcomes["e1_2"] == .canceled)
        guard case .invalid(let why)? = outcomes["e1_3"] else {
            Issue.record("an empty request is refused as invalid: \(String(describing: outcomes["e1_3"]))")
            return
        }
        #expect(why.contains("contents"))
    }

    @Test(.timeLimit(.minutes(1))) func cancelAndFindByDisplayName() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "600"])
        let api = api(sim)
        let prepared = Date()
        let other = try api.create(label: "x9", requests: batch("x9"))
        let created = try api.create(label: "f1", requests: batch("f1"))
        func search(_ label: String, known: Set<String> = []) -> BatchSearch {
            fixture.search(label, prepared: prepared, known: known)
        }
        #expect(try api.find(search("f1")) == .found(try api.retrieve(created.id)))
        #expect(try api.find(search("x9")) == .found(try api.retrieve(other.id)))
        #expect(try api.find(search("never")) == .absent)
        #expect(try api.find(search("f1", known: [created.id])) == .absent)

        _ = try api.cancel(created.id)
        let done = try ended(api, created.id)
        #expect(done.status == "BATCH_STATE_CANCELLED")
        let sent = Dictionary(uniqueKeysWithValues: batch("f1").map { ($0.customID, $0.request) })
        #expect(try api.results(of: done, requests: sent).allSatisfy { $0.outcome == .canceled })
    }

    /// `lane: batch` on `provider: gemini`: one batch at the batch prices, every item answered
    /// as the live endpoint answers it, and `run --wait` stays until it is collected.
    @Test(.timeLimit(.minutes(1))) func aJobsBatchLaneRunsOnGemini() throws {
        let sim = try SimProcess(arguments: ["--require-key", Self.key, "--batch-delay", "1"])
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: gemini\nbase_url: \(sim.url)\n")
        let items = (1...10).map { "  - {id: s\($0), item: \"Shipment \($0) arrived \($0 % 4) days late.\"}" }
        try workspace.write(
            "jobs/sort.yaml",
            "kind: prompt\ntemplate: \"{{item}}\"\nmax_tokens: 40\nlane: batch\nbatching: off\nitems:\n"
                + items.joined(separator: "\n") + "\n")
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root),
            environment: try workspace.environment(["GEMINI_API_KEY": Self.key]),
            logger: Logger(label: "test"))
        let outcome = try context.run(
            try context.loadJob("sort"), options: JobRunner.Options(waitForBatches: true))
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 10 && outcome.spend.calls == 10)
        let batches = try #require(try sim.stats()["batches"] as? [String: Any])
        #expect((batches["created"] as? NSNumber)?.intValue == 1)

        let price = try #require(PriceTable.bundled.cost(of: "gemini-2.5-flash"))
        let usage = Usage(input: outcome.spend.inputTokens, output: outcome.spend.outputTokens)
        #expect(abs(outcome.spend.dollars - price.dollars(for: usage, lane: .batch)) < 1e-12)

        let live = GeminiProvider(apiKey: Self.key, baseURL: sim.url, logger: Logger(label: "t"))
        let store = try workspace.openStore()
        let results = try store.runs.results(runID: outcome.run.id)
        for record in try store.runs.requests(runID: outcome.run.id) {
            let answer = try live.complete(try record.completionRequest())
            #expect(results[record.id]?.text == answer.text, "\(record.itemId)")
        }
    }
}
