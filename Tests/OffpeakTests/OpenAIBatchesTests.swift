import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The OpenAI Batch API over libcurl against the built `offpeak-sim`: the live chat bodies go up
/// as a JSONL file, the batch carries offpeak's label in its metadata, and the output and error
/// files are matched back by custom id; cancel, find by label, every kind of result, a create
/// never sent twice, and redaction.
@Suite(.ownThreads) struct OpenAIBatchesTests {
    static let key = "batch-test-secret-7d1e0b6a93"
    let fixture = BatchAPIFixture(key: Self.key)
    var prompts: [String] { fixture.prompts }

    func provider(_ sim: SimProcess, retries: Int = 0, timeout: TimeInterval = 30) -> OpenAIProvider {
        OpenAIProvider(
            apiKey: Self.key, baseURL: sim.url + "/v1/",
            options: fixture.options(retries: retries, timeout: timeout),
            logger: Logger(label: "test"))
    }

    func api(_ provider: OpenAIProvider) throws -> any BatchAPI {
        try #require(provider.batches)
    }

    func request(_ prompt: String) -> CompletionRequest { fixture.request(prompt) }
    func batch(_ label: String, _ prompts: [String]? = nil) -> [BatchRequest] {
        fixture.batch(label, prompts)
    }
    func ended(_ api: any BatchAPI, _ id: String) throws -> RemoteBatch { try fixture.ended(api, id) }
    func created(_ sim: SimProcess) throws -> Int { try fixture.created(sim) }

    @Test(.timeLimit(.minutes(1))) func resultsMatchedByCustomIDEqualTheLiveAnswers() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let provider = provider(sim)
        let live = try prompts.map { try provider.complete(request($0)) }
        let api = try api(provider)
        let requests = batch("b1")
        let created = try api.create(label: "b1", requests: requests)
        #expect(
            created.id.hasPrefix("batch_") && created.phase == .inProgress && created.status == "validating")
        #expect(created.label == "b1" && created.counts.processing == 4 && created.createdAt != nil)
        let done = try ended(api, created.id)
        #expect(done.phase == .ended && done.status == "completed" && done.endedAt != nil)
        #expect(done.counts == RemoteBatch.Counts(succeeded: 4) && done.errorFileID == nil)
        let sent = Dictionary(uniqueKeysWithValues: requests.map { ($0.customID, $0.request) })
        let results = try api.results(of: done, requests: sent)
        #expect(results.map(\.customID) != requests.map(\.customID), "the sim serves them out of order")
        #expect(results.map(\.customID).sorted() == requests.map(\.customID))
        for result in results {
            let index = try #require(Int(result.customID.dropFirst(3)))
            guard case .succeeded(let answer) = result.outcome else {
                Issue.record("\(result.customID): \(result.outcome)")
                continue
            }
            #expect(answer.text == live[index].text && answer.usage == live[index].usage)
            #expect(answer.finishReason == live[index].finishReason && !answer.usageEstimated)
        }
    }

    @Test(.timeLimit(.minutes(1))) func cancelEndsTheRequestsAsCanceled() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "600"])
        let api = try api(provider(sim))
        let created = try api.create(label: "c1", requests: batch("c1"))
        let canceling = try api.cancel(created.id)
        #expect(canceling.phase == .canceling && canceling.status == "cancelling")
        let done = try ended(api, created.id)
        #expect(done.phase == .ended && done.status == "cancelled" && done.label == "c1")
        let results = try api.results(of: done, requests: [:])
        #expect(results.count == 4 && results.allSatisfy { $0.outcome == .canceled })
    }

    @Test(.timeLimit(.minutes(1))) func findLooksForTheLabelInMetadata() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "600"])
        let api = try api(provider(sim))
        let prepared = Date()
        let created = try api.create(label: "f1", requests: batch("f1"))
        for index in 0..<3 {
            _ = try api.create(label: "g\(index)", requests: batch("g\(index)", ["Hello."]))
        }
        func search(_ label: String, known: Set<String> = []) -> BatchSearch {
            fixture.search(label, prepared: prepared, known: known)
        }
        #expect(try api.find(search("f1")) == .found(try api.retrieve(created.id)), "found while running")
        #expect(try api.find(search("never")) == .absent)
        #expect(try api.find(search("f1", known: [created.id])) == .absent)
    }

    @Test(.timeLimit(.minutes(1))) func erroredInvalidExpiredAndCanceledResultsAreMapped() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "0"])
        let faults = try JSONSerialization.data(
            withJSONObject: ["errored": ["e1_0"], "expired": ["e1_1"], "canceled": ["e1_2"]])
        _ = try sim.request("POST", "/sim/batch-faults", body: faults)
        let api = try api(provider(sim))
        var requests = batch("e1", prompts + ["Bye."])
        requests[3].request.messages = []
        let done = try ended(api, try api.create(label: "e1", requests: requests).id)
        #expect(done.counts == RemoteBatch.Counts(succeeded: 1, errored: 4))
        let outcomes = Dictionary(
            uniqueKeysWithValues: try api.results(of: done, requests: [:]).map { ($0.customID, $0.outcome) })
        #expect(outcomes["e1_0"] == .errored("HTTP 500: offpeak-sim: simulated batch request error"))
        #expect(outcomes["e1_1"] == .expired)
        #expect(outcomes["e1_2"] == .canceled)
        #expect(outcomes["e1_3"] == .invalid("messages: at least one message is required"))
        guard case .succeeded = outcomes["e1_4"] else {
            Issue.record("e1_4 is answered from the output file")
            return
        }
    }

    @Test(.timeLimit(.minutes(1))) func aCreateThatTimedOutIsNotSentAgain() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "600", "--timeout-delay", "3"])
        let api = try api(provider(sim, retries: 3, timeout: 1))
        let prepared = Date()
        try sim.queueFaults(["timeout"])
        #expect(throws: ProviderError.timeout(seconds: 1)) {
            try api.create(label: "t1", requests: batch("t1"))
        }
        Thread.sleep(forTimeInterval: 2.5)
        #expect(try created(sim) == 1, "the sim made the batch; offpeak did not ask twice")
        let search = BatchSearch(
            label: "t1", customIDPrefix: "t1_", requestCount: 4, preparedAt: prepared, createdBy: Date(),
            known: [])
        guard case .found(let found) = try api.find(search) else {
            Issue.record("the batch whose create timed out is found by its label")
            return
        }
        #expect(found.label == "t1")
        try sim.queueFaults(["429"])
        _ = try api.create(label: "t2", requests: batch("t2"))
        #expect(try created(sim) == 2, "a create refused with 429 is sent again, once answered")
    }

    @Test(.timeLimit(.minutes(1))) func aKeyEchoedInAnErrorIsRedacted() throws {
        let sim = try SimProcess()
        let api = try api(provider(sim))
        try sim.queueFaults(["echo400"])
        do {
            _ = try api.create(label: "r1", requests: batch("r1"))
            Issue.record("an echo400 fault refuses the create")
        } catch {
            guard case .http(400, let message, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(message.contains("authorization") && !message.contains(Self.key))
        }
    }
}
