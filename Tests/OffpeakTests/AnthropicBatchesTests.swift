import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Message Batches over libcurl against the built `offpeak-sim`: a batch is created from the
/// live Messages bodies, retrieved until it ends, and its results matched by custom id equal the
/// live answers; cancel, find, every kind of result, a create never sent twice, and redaction.
@Suite(.ownThreads) struct AnthropicBatchesTests {
    static let key = "batch-test-secret-4f9a8c7e2b"
    let fixture = BatchAPIFixture(key: Self.key)
    var prompts: [String] { fixture.prompts }

    func provider(_ sim: SimProcess, retries: Int = 0, timeout: TimeInterval = 30) -> AnthropicProvider {
        AnthropicProvider(
            apiKey: Self.key, baseURL: sim.url, kind: .sim,
            options: fixture.options(retries: retries, timeout: timeout),
            logger: Logger(label: "test"))
    }

    func api(_ provider: AnthropicProvider) throws -> any BatchAPI {
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
        #expect(created.id.hasPrefix("msgbatch_") && created.phase == .inProgress)
        #expect(created.status == "in_progress" && created.counts.processing == 4)
        #expect(created.createdAt != nil && created.expiresAt != nil && created.resultsURL == nil)
        let done = try ended(api, created.id)
        #expect(done.phase == .ended && done.status == "ended" && done.endedAt != nil)
        #expect(done.counts == RemoteBatch.Counts(succeeded: 4))
        #expect(done.resultsURL == "\(sim.url)/v1/messages/batches/\(created.id)/results")
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
        #expect(
            canceling.id == created.id && canceling.phase == .canceling && canceling.status == "canceling")
        let done = try ended(api, created.id)
        #expect(done.phase == .ended && done.counts == RemoteBatch.Counts(canceled: 4))
        let results = try api.results(of: done, requests: [:])
        #expect(results.count == 4 && results.allSatisfy { $0.outcome == .canceled })
    }

    @Test(.timeLimit(.minutes(1))) func findWaitsForARunningCandidateThenFindsItByCustomIDs() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "3"])
        let api = try api(provider(sim))
        let prepared = Date()
        let other = try api.create(label: "x9", requests: batch("x9", ["Hello."]))
        let created = try api.create(label: "f1", requests: batch("f1"))
        func search(_ label: String, known: Set<String> = []) -> BatchSearch {
            fixture.search(label, prepared: prepared, known: known)
        }
        guard case .undecided(let why) = try api.find(search("f1")) else {
            Issue.record("a running candidate leaves it undecided")
            return
        }
        #expect(why.contains(created.id))
        _ = try ended(api, created.id)
        _ = try ended(api, other.id)
        #expect(try api.find(search("f1")) == .found(try api.retrieve(created.id)))
        #expect(try api.find(search("never")) == .absent)
        #expect(try api.find(search("f1", known: [created.id])) == .absent)
        var late = search("f1")
        late.preparedAt = Date() + 3600
        late.createdBy = late.preparedAt + 60
        #expect(try api.find(late) == .absent, "batches older than the label's cannot be it")
    }

    @Test(.timeLimit(.minutes(1))) func erroredInvalidExpiredAndCanceledResultsAreMapped() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "0"])
        let faults = try JSONSerialization.data(
            withJSONObject: ["errored": ["e1_0"], "expired": ["e1_1"], "canceled": ["e1_2"]])
        _ = try sim.request("POST", "/sim/batch-faults", body: faults)
        let api = try api(provider(sim))
        var requests = batch("e1")
        requests[3].request.messages = []
        let done = try ended(api, try api.create(label: "e1", requests: requests).id)
        #expect(done.counts == RemoteBatch.Counts(errored: 2, canceled: 1, expired: 1))
        let outcomes = Dictionary(
            uniqueKeysWithValues: try api.results(of: done, requests: [:]).map { ($0.customID, $0.outcome) })
        #expect(outcomes["e1_0"] == .errored("api_error: offpeak-sim: simulated batch request error"))
        #expect(outcomes["e1_1"] == .expired)
        #expect(outcomes["e1_2"] == .canceled)
        #expect(outcomes["e1_3"] == .invalid("messages: at least one message is required"))
    }

    @Test(.timeLimit(.minutes(1))) func aCreateThatTimedOutIsNotSentAgain() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "600", "--timeout-delay", "3"])
        let api = try api(provider(sim, retries: 3, timeout: 1))
        try sim.queueFaults(["timeout"])
        #expect(throws: ProviderError.timeout(seconds: 1)) {
            try api.create(label: "t1", requests: batch("t1"))
        }
        Thread.sleep(forTimeInterval: 2.5)
        #expect(try created(sim) == 1, "the sim made the batch; offpeak did not ask twice")
        try sim.queueFaults(["529", "429"])
        _ = try api.create(label: "t2", requests: batch("t2"))
        #expect(try created(sim) == 2, "a create refused with 529 or 429 is sent again, once answered")
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
            #expect(message.contains("x-api-key") && !message.contains(Self.key))
        }
    }

    /// A server that mounts the API under `/anthropic` and names results by a path (issue 21):
    /// the path is resolved against the base URL, prefix kept once; the API is not served at the
    /// root, so a prefix dropped or doubled would fail.
    @Test(.timeLimit(.minutes(1))) func aResultsPathUnderAPrefixIsFetchedFromTheBaseURL() throws {
        let sim = try SimProcess(arguments: [
            "--batch-delay", "0", "--path-prefix", "/anthropic", "--relative-results-url",
        ])
        let options = ProviderOptions(
            requestTimeout: 30, retryPolicy: RetryPolicy(maxRetries: 0), sleep: { _ in })
        let api = try api(
            AnthropicProvider(
                apiKey: Self.key, baseURL: sim.url + "/anthropic", kind: .sim, options: options,
                logger: Logger(label: "test")))
        let done = try ended(api, try api.create(label: "p1", requests: batch("p1")).id)
        #expect(done.resultsURL == "/anthropic/v1/messages/batches/\(done.id)/results")
        #expect(
            try api.results(of: done, requests: [:]).map(\.customID).sorted() == batch("p1").map(\.customID))
        #expect(throws: ProviderError.self) {
            try self.api(provider(sim)).create(label: "p2", requests: batch("p2"))
        }
    }

    /// What the provider named, quoted in an error, is redacted like any text from outside.
    @Test(.timeLimit(.minutes(1))) func aResultsURLCarryingAKeyLeavesItOutOfTheError() throws {
        let sim = try SimProcess(arguments: ["--results-status", "404"])
        let api = try api(provider(sim))
        var batch = RemoteBatch(id: "msgbatch_k", phase: .ended, status: "ended")
        batch.resultsURL = "/v1/not a url/\(Self.key)"
        #expect(
            throws: ProviderError.badResponse(
                "the provider's URL \"/v1/not a url/[redacted]\" is not an http or https URL")
        ) {
            try api.results(of: batch, requests: [:])
        }
        batch.resultsURL = "http://127.0.0.1:1/v1/\(Self.key)/results"
        #expect(
            throws: ProviderError.http(
                status: 404,
                message:
                    "offpeak-sim refuses results downloads (--results-status 404); the provider's results_url "
                    + "was http://127.0.0.1:1/v1/[redacted]/results, on another host than the base URL, and offpeak "
                    + "sends its key to the base URL's host only",
                url: sim.url + "/v1/messages/batches/msgbatch_k/results")
        ) { try api.results(of: batch, requests: [:]) }
    }
}
