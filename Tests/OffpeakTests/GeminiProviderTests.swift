import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 26, item 3: Google's Gemini API (`generateContent`), its usage, errors and rate limits,
/// its keys, and a run against offpeak-sim speaking it over loopback.
@Suite(.ownThreads) struct GeminiProviderTests {
    static func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func request(keys: [String]? = nil) -> CompletionRequest {
        CompletionRequest(
            model: "gemini-2.5-flash", system: "You sort shipments.",
            messages: [
                ChatMessage(role: .user, content: "first"), ChatMessage(role: .assistant, content: "ok"),
                ChatMessage(role: .user, content: "second"),
            ], maxTokens: 64, temperature: 0.2, stop: ["END"], answerKeys: keys)
    }

    @Test func theBodyIsWrittenInTheAPIsOwnCamelCase() throws {
        let body = try Self.json(GeminiProvider.requestBody(for: Self.request()))
        #expect(Set(body.keys) == ["contents", "systemInstruction", "generationConfig"])
        let contents = try #require(body["contents"] as? [[String: Any]])
        #expect(contents.map { $0["role"] as? String } == ["user", "model", "user"])
        #expect((contents.last?["parts"] as? [[String: String]]) == [["text": "second"]])
        #expect(
            (body["systemInstruction"] as? [String: Any])?["parts"] as? [[String: String]] == [
                ["text": "You sort shipments."]
            ])
        let config = try #require(body["generationConfig"] as? [String: Any])
        #expect(config["maxOutputTokens"] as? Int == 64)
        #expect(config["temperature"] as? Double == 0.2)
        #expect(config["stopSequences"] as? [String] == ["END"])
        #expect(config["responseMimeType"] == nil)

        let shaped = try Self.json(GeminiProvider.requestBody(for: Self.request(keys: ["b", "a"])))
        let shape = try #require(shaped["generationConfig"] as? [String: Any])
        #expect(shape["responseMimeType"] as? String == "application/json")
        let schema = try #require(shape["responseSchema"] as? [String: Any])
        #expect(schema["type"] as? String == "OBJECT")
        #expect(schema["required"] as? [String] == ["b", "a"])
        #expect(schema["propertyOrdering"] as? [String] == ["b", "a"])
        #expect((schema["properties"] as? [String: [String: String]])?["a"] == ["type": "STRING"])

        let provider = GeminiProvider(apiKey: "k", baseURL: "http://127.0.0.1:9/", logger: Logger(label: "t"))
        #expect(
            provider.endpoint(for: Self.request())
                == "http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:generateContent")
        var named = Self.request()
        named.model = "models/gemini-2.5-pro"
        #expect(
            provider.endpoint(for: named) == "http://127.0.0.1:9/v1beta/models/gemini-2.5-pro:generateContent"
        )
    }

    @Test func usageCountsCachedTokensInsideThePromptAndThoughtsAsOutput() throws {
        let body = Data(
            #"""
            {"candidates": [{"content": {"parts": [{"text": "thinking...", "thought": true}, {"text": "Late."}],
              "role": "model"}, "finishReason": "STOP"}],
             "usageMetadata": {"promptTokenCount": 100, "cachedContentTokenCount": 40, "candidatesTokenCount": 10,
              "thoughtsTokenCount": 5, "totalTokenCount": 115},
             "modelVersion": "gemini-2.5-flash", "responseId": "r-1"}
            """#.utf8)
        let response = try GeminiProvider.parseResponse(
            body, for: Self.request(), redactor: Redactor(environment: [:]))
        #expect(response.text == "Late.")
        #expect(response.usage == Usage(input: 60, output: 15, cacheRead: 40))
        #expect(response.finishReason == .stop && response.id == "r-1" && !response.usageEstimated)

        let cut = Data(
            #"{"candidates": [{"content": {"parts": [{"text": "Lat"}]}, "finishReason": "MAX_TOKENS"}]}"#.utf8
        )
        let short = try GeminiProvider.parseResponse(
            cut, for: Self.request(), redactor: Redactor(environment: [:]))
        #expect(short.finishReason == .length && short.usageEstimated)

        let blocked = Data(#"{"promptFeedback": {"blockReason": "SAFETY"}}"#.utf8)
        #expect(throws: ProviderError.badResponse("prompt blocked: SAFETY")) {
            try GeminiProvider.parseResponse(
                blocked, for: Self.request(), redactor: Redactor(environment: [:]))
        }
    }

    @Test func anErrorBodyGivesItsStatusAndWhenToComeBack() {
        let body = Data(
            #"""
            {"error": {"code": 429, "message": "You exceeded your current quota, please check your plan and billing details.",
              "status": "RESOURCE_EXHAUSTED", "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure"},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]}}
            """#.utf8)
        let details = ProviderTransport.errorDetails(in: body, redactor: Redactor(environment: [:]))
        #expect(details.code == "RESOURCE_EXHAUSTED")
        #expect(details.retryAfter == "7")
        // Gemini says "quota" and "billing" for every limit: a rate limit, waited for.
        #expect(!RetryPolicy.isSpendLimit(errorCode: details.code, message: details.message))
        #expect(CallOutcome.throttles(status: 429, errorCode: details.code, message: details.message))
    }

    @Test func theKeyIsReadAsGooglesSDKsReadIt() throws {
        var config = WorkspaceConfig()
        config.provider = .gemini
        func provider(_ environment: [String: String]) throws -> any CompletionProvider {
            try ProviderFactory.make(config: config, environment: environment, logger: Logger(label: "t"))
        }
        #expect(throws: ProviderError.missingKey(variable: "GEMINI_API_KEY")) { try provider([:]) }
        let gemini = try provider(["GEMINI_API_KEY": "g-key"])
        #expect(gemini.kind == .gemini && gemini.baseURL == "https://generativelanguage.googleapis.com")
        let both = try #require(
            try provider([
                "GEMINI_API_KEY": "g-key", "GOOGLE_API_KEY": "google-key", "GEMINI_BASE_URL": "http://h:1",
            ])
                as? GeminiProvider)
        #expect(both.headers.first { $0.name == "x-goog-api-key" }?.value == "google-key")
        #expect(both.baseURL == "http://h:1")
        #expect(config.model(for: .balanced) == "gemini-2.5-flash")
        #expect(PriceTable.bundled.cost(of: "gemini-2.5-flash")?.inputCostPerToken == 3e-07)
    }

    /// One call through the transport, against the sim's Gemini endpoint: a rate limit (429
    /// `RESOURCE_EXHAUSTED` with a `RetryInfo`) waited out and asked again; a wrong key refused.
    @Test func aRateLimitIsWaitedOutAndAWrongKeyRefused() throws {
        let sim = try SimProcess(arguments: ["--require-key", "g-key"])
        try sim.queueFaults(["429"])
        let provider = GeminiProvider(apiKey: "g-key", baseURL: sim.url, logger: Logger(label: "t"))
        let reply = provider.call(Self.request())
        #expect(try reply.answer.get().usage.input > 0)
        #expect(reply.attempts == 2 && reply.throttledAttempts == 1)

        let wrong = GeminiProvider(apiKey: "nope", baseURL: sim.url, logger: Logger(label: "t"))
        let refused = wrong.call(Self.request())
        guard case .failure(let error) = refused.answer,
            case .keyRefused(400, let message, _)? = error as? ProviderError
        else {
            Issue.record("expected the key refused with a 400, got \(refused.answer)")
            return
        }
        #expect(message == "invalid API key")
        #expect(refused.attempts == 1, "a refused key is not asked again")
    }

    /// Gemini refuses a wrong key with a 400 (`API_KEY_INVALID`), not a 401: the run stops at the
    /// first call as a configuration error, every item still pending, none charged an attempt.
    @Test func aWrongKeyStopsTheRunAtTheFirstCall() throws {
        let sim = try SimProcess(arguments: ["--require-key", "g-key"])
        let workspace = try Self.workspace(sim, items: 12, batching: Self.batchesOfFour)
        let outcome = try workspace.run(job: "sort", environment: ["GEMINI_API_KEY": "wrong"])
        #expect(outcome.status == .configuration)
        #expect(outcome.run.state == .interrupted)
        #expect(outcome.run.itemsDone == 0)
        let url = "\(sim.url)/v1beta/models/gemini-2.5-flash:generateContent"
        #expect(
            outcome.message
                == "job sort: provider refused the key (HTTP 400 to \(url)): invalid API key; "
                + "0 of 12 items answered (0 now); run it again to do the rest")
        let stats = try sim.stats()
        let endpoints = try #require(stats["by_endpoint"] as? [String: [String: Any]])
        #expect(endpoints["generate_content"]?["calls"] as? Int == 1, "\(stats)")
    }

    /// A job on `provider: gemini` against the sim: every item answered as the sim answers it
    /// alone, batched prompts held to `responseSchema`, a long system prompt read from Gemini's
    /// implicit cache after the first call, and the ledger priced at gemini-2.5-flash's prices.
    @Test func aJobRunsOnGeminiEndToEnd() throws {
        let sim = try SimProcess(arguments: ["--require-key", "g-key"])
        let workspace = try Self.workspace(
            sim, items: 12, batching: Self.batchesOfFour, config: "structured_output: on\n")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 12)
        #expect(outcome.spend.calls == 3, "three prompts of four")
        #expect(outcome.spend.cacheReadTokens > 0, "the system prompt read from the implicit cache")

        let stats = try sim.stats()
        let endpoints = try #require(stats["by_endpoint"] as? [String: [String: Any]])
        #expect(endpoints["generate_content"]?["ok_calls"] as? Int == 3)

        let price = try #require(PriceTable.bundled.cost(of: "gemini-2.5-flash"))
        let usage = Usage(
            input: outcome.spend.inputTokens, output: outcome.spend.outputTokens,
            cacheRead: outcome.spend.cacheReadTokens, cacheWrite: outcome.spend.cacheWriteTokens)
        #expect(abs(outcome.spend.dollars - price.dollars(for: usage, lane: .live)) < 1e-12)

        let store = try workspace.openStore()
        let requests = try store.runs.requests(runID: outcome.run.id)
        let prompts = try requests.map { try $0.completionRequest() }
        let asked = try JSONSerialization.data(withJSONObject: [
            "texts": prompts.map { $0.messages.last?.content ?? "" }
        ])
        let expected = try #require(
            try Self.json(try sim.request("POST", "/sim/expected", body: asked))["answers"] as? [String])
        let results = try store.runs.results(runID: outcome.run.id)
        for (record, answer) in zip(requests, expected) {
            #expect(results[record.id]?.text == answer, "\(record.itemId)")
        }
    }

    /// Batched prompts of four items, unaudited.
    static let batchesOfFour = "batching: {max_items: 4}\naudit: off"

    /// A workspace on the sim's Gemini endpoint (`config` added to offpeak.yaml) with one job, `sort`,
    /// of `items` shipments under a long system prompt, batched as `batching` says.
    static func workspace(
        _ sim: SimProcess, items: Int, batching: String = "batching: off", config: String = ""
    ) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml",
            "provider: gemini\nbase_url: \(sim.url)\n\(config)limits: {gemini: {in_flight: 1}}\n")
        let rules = String(repeating: "Label each shipment by how late it arrived, in one word. ", count: 120)
        let lines = (1...items).map {
            "  - {id: s\($0), item: \"Shipment \($0) arrived \($0 % 4) days late.\"}"
        }
        try workspace.write(
            "jobs/sort.yaml",
            "kind: prompt\nsystem: \"\(rules)\"\ntemplate: \"{{item}}\"\nmax_tokens: 40\n\(batching)\nitems:\n"
                + lines.joined(separator: "\n") + "\n")
        return workspace
    }

    static func run(_ workspace: TemporaryWorkspace) throws -> RunOutcome {
        try workspace.run(job: "sort", environment: ["GEMINI_API_KEY": "g-key"])
    }
}

/// Gemini's explicit context caching (`GeminiContextCaches`): made for a long system prompt seen a
/// second time, named by the calls after, its storage booked with the call that made it.
@Suite(.ownThreads) struct GeminiContextCacheTests {
    @Test func aCacheIsMadeOnTheSecondSightingAndRenewedBeforeItExpires() {
        let caches = GeminiContextCaches()
        let now = Date()
        #expect(caches.plan("k", now: now) == .plain)
        #expect(caches.plan("k", now: now) == .create)
        #expect(caches.plan("k", now: now) == .plain, "another call while it is being made goes plain")
        caches.made("k", name: "cachedContents/1", expires: now + 600)
        #expect(caches.plan("k", now: now + 500) == .use("cachedContents/1"))
        #expect(caches.plan("k", now: now + 560) == .create, "a minute before its expiry it is made again")
        caches.failed("k")
        #expect(caches.plan("k", now: now) == .create)
        #expect(caches.plan("other", now: now) == .plain)
        #expect(GeminiContextCaches.minimumTokens("gemini-2.5-flash") == 1024)
        #expect(GeminiContextCaches.minimumTokens("gemini-2.5-pro") == 4096)
    }

    static func caches(_ sim: SimProcess) throws -> [[String: Any]] {
        let body = try sim.request("GET", "/v1beta/cachedContents?key=g-key")
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        return try #require(object["cachedContents"] as? [[String: Any]])
    }

    @Test func sixCallsSharingALongSystemPromptReadItFromOneCache() throws {
        let sim = try SimProcess(arguments: ["--require-key", "g-key"])
        let outcome = try GeminiProviderTests.run(try GeminiProviderTests.workspace(sim, items: 6))
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.spend.calls == 6)
        let made = try Self.caches(sim)
        #expect(made.count == 1)
        let cached = try #require(
            (made.first?["usageMetadata"] as? [String: Any])?["totalTokenCount"] as? Int)
        #expect(cached >= 1024)
        // The first call sends it; the second makes the cache and books its storage; four read it.
        #expect(outcome.spend.cacheWriteTokens == cached)
        #expect(outcome.spend.cacheReadTokens == 4 * cached)
        let price = try #require(PriceTable.bundled.cost(of: "gemini-2.5-flash"))
        let usage = Usage(
            input: outcome.spend.inputTokens, output: outcome.spend.outputTokens,
            cacheRead: outcome.spend.cacheReadTokens, cacheWrite: outcome.spend.cacheWriteTokens)
        #expect(abs(outcome.spend.dollars - price.dollars(for: usage, lane: .live)) < 1e-12)
        #expect(
            outcome.spend.dollars
                < price.dollars(for: Usage(input: usage.totalInput, output: usage.output), lane: .live))
    }

    @Test func aPromptSentOnceGetsNoCache() throws {
        let sim = try SimProcess(arguments: ["--require-key", "g-key"])
        let outcome = try GeminiProviderTests.run(try GeminiProviderTests.workspace(sim, items: 1))
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(try Self.caches(sim).isEmpty)
        #expect(outcome.spend.cacheWriteTokens == 0)
    }
}
