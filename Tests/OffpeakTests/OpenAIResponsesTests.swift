import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// OpenAI's Responses API (issue 50, item 2): the `openai` provider speaks it at OpenAI itself
/// (`/v1/responses`, `store: false`, the system prompt as `instructions`, a batched prompt's shape as
/// `text.format`), chat completions to OpenAI-compatible servers; `openai_api` in offpeak.yaml
/// chooses either. offpeak-sim speaks it (checked by the `openai` SDK in `scripts/sdk_check.py`).
@Suite(.ownThreads) struct OpenAIResponsesTests {
    static let logger = Logger(label: "test")

    @Test func theRequestIsTheResponsesShapeAndItsUsageIsRead() throws {
        var request = CompletionRequest(
            model: "gpt-5-mini", system: "Answer in JSON.", messages: [.init(role: .user, content: "hi")],
            maxTokens: 100)
        request.answerKeys = ["a", "b"]
        let body = try OpenAIResponsesProvider.requestBody(for: request, lane: .flex)
        let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(json["store"] as? Bool == false)
        #expect(json["instructions"] as? String == "Answer in JSON.")
        #expect(json["max_output_tokens"] as? Int == 100 && json["max_tokens"] == nil)
        #expect(json["input"] as? [[String: String]] == [["role": "user", "content": "hi"]])
        #expect(json["service_tier"] as? String == "flex")
        let format = try #require((json["text"] as? [String: Any])?["format"] as? [String: Any])
        #expect(
            format["type"] as? String == "json_schema" && format["name"] as? String == StructuredAnswer.name)
        #expect(format["strict"] as? Bool == true && format["json_schema"] == nil)
        #expect((format["schema"] as? [String: Any])?["required"] as? [String] == ["a", "b"])

        let answer = Data(
            """
            {"id": "resp_1", "object": "response", "status": "incomplete",
             "incomplete_details": {"reason": "max_output_tokens"}, "model": "gpt-5-mini-2025-08-07",
             "output": [{"type": "reasoning", "id": "rs_1", "summary": []},
                        {"type": "message", "id": "msg_1", "role": "assistant", "status": "incomplete",
                         "content": [{"type": "output_text", "text": "{\\"a\\": ", "annotations": []}]}],
             "usage": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 1536},
                       "output_tokens": 100, "output_tokens_details": {"reasoning_tokens": 64}, "total_tokens": 2100},
             "service_tier": "flex"}
            """.utf8)
        let response = try OpenAIResponsesProvider.parseResponse(
            answer, for: request, redactor: Redactor(environment: [:]))
        #expect(response.text == "{\"a\": ")
        #expect(response.finishReason == .length)
        #expect(response.usage == Usage(input: 464, output: 100, cacheRead: 1536))
        #expect(
            !response.usageEstimated && response.serviceTier == "flex"
                && response.model == "gpt-5-mini-2025-08-07")
    }

    /// Issue 50, item 4: one `prompt_cache_key` per job prefix (model and system prompt), so OpenAI
    /// routes the calls sharing it to one cache; none without a prefix or with the cache off.
    @Test func callsSharingAPrefixShareOnePromptCacheKey() throws {
        func key(_ system: String?, _ user: String, model: String = "gpt-5-mini", cache: Bool = true) throws
            -> String?
        {
            let request = CompletionRequest(
                model: model, system: system, messages: [.init(role: .user, content: user)], maxTokens: 50,
                cacheSystemPrompt: cache)
            let body = try OpenAIResponsesProvider.requestBody(for: request)
            let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            return json["prompt_cache_key"] as? String
        }
        let first = try #require(try key("Classify the ticket.", "one"))
        #expect(first.hasPrefix("offpeak-") && first.count == 40 && !first.contains("Classify"))
        #expect(try key("Classify the ticket.", "two") == first)
        #expect(try key("Summarize the ticket.", "one") != first)
        #expect(try key("Classify the ticket.", "one", model: "gpt-5") != first)
        #expect(try key(nil, "one") == nil)
        #expect(try key("Classify the ticket.", "one", cache: false) == nil)
    }

    /// Extended retention (`prompt_cache_retention: 24h`) where the model takes it and the prefix is
    /// cached; `in_memory` when the job asks for five minutes and the model offers both; no field for
    /// a model that takes neither, or when the job asks for five minutes of a model that has only
    /// the day.
    @Test func aCachedPrefixIsKeptADayOnTheModelsThatOfferIt() throws {
        func retention(_ model: String, ttl: PromptCacheTTL? = nil, cache: Bool = true) throws -> String? {
            var request = CompletionRequest(
                model: model, system: "Classify the ticket.", messages: [.init(role: .user, content: "one")],
                maxTokens: 50, cacheSystemPrompt: cache)
            request.cacheTTL = ttl
            let body = try OpenAIResponsesProvider.requestBody(for: request)
            let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            return json["prompt_cache_retention"] as? String
        }
        #expect(try retention("gpt-4.1") == "24h")
        #expect(try retention("gpt-4.1-2025-04-14") == "24h")
        #expect(try retention("gpt-5.1", ttl: .oneHour) == "24h")
        #expect(try retention("gpt-5.1", ttl: .fiveMinutes) == "in_memory")
        #expect(try retention("gpt-5.5") == "24h")
        #expect(try retention("gpt-5.5-pro", ttl: .fiveMinutes) == nil)
        #expect(try retention("gpt-6") == nil, "not a name OpenAI has listed")
        #expect(try retention("gpt-4.1-mini") == nil)
        #expect(try retention("gpt-4o-mini") == nil)
        #expect(try retention("gpt-4.1", cache: false) == nil)
    }

    /// Two runs of a job on gpt-4.1 three seconds apart, against a sim whose in-memory cache lasts
    /// two: with auto the second run's call reads the prefix the first wrote, kept a day; with
    /// `prompt_cache_ttl: 5m` (in memory) it finds it gone. The sim refuses a retention it does not
    /// know, as OpenAI does, and each ledger is what its sim billed.
    @Test func extendedRetentionKeepsThePrefixPastTheInMemoryCache() throws {
        let system = String(repeating: "Classify the ticket as billing, bug or other. ", count: 120)
        func runTwice(ttl: String?) throws -> (read: Int, sim: SimProcess, workspace: TemporaryWorkspace) {
            let sim = try SimProcess(arguments: ["--cache-ttl", "2"])
            let workspace = try TemporaryWorkspace()
            try workspace.write(
                "offpeak.yaml",
                "provider: openai\nbase_url: \(sim.url)/v1\nopenai_api: responses\n"
                    + "models: {openai: {fast: gpt-4.1}}\n")
            for (index, item) in ["invoice", "crash"].enumerated() {
                if index > 0 { Thread.sleep(forTimeInterval: 3) }
                try workspace.write(
                    "jobs/classify.yaml",
                    "kind: prompt\ntier: fast\nsystem: \"\(system)\"\ntemplate: \"{{item}}\"\nmax_tokens: 20\n"
                        + "items: [\(item)]\n" + (ttl.map { "prompt_cache_ttl: \($0)\n" } ?? ""))
                let run = try workspace.offpeak(
                    ["run", "classify"], environment: ["OPENAI_API_KEY": "sk-test"])
                #expect(run.status == 0, "\(run.stderr)")
            }
            let billed = try sim.billed()
            let price = try #require(PriceTable.bundled.cost(of: "gpt-4.1"))
            let read = billed["cache_read_input_tokens"] ?? 0
            let dollars = price.dollars(
                for: Usage(
                    input: (billed["input_tokens"] ?? 0), output: billed["output_tokens"] ?? 0,
                    cacheRead: read),
                lane: .live)
            #expect(abs(try BatchLaneTests.ledgerDollars(try workspace.openStore()) - dollars) < 1e-12)
            return (read, sim, workspace)
        }
        let day = try runTwice(ttl: nil)
        #expect(day.read >= 1024, "the second run read the prefix the first wrote")
        #expect(try runTwice(ttl: "5m").read == 0, "kept in memory, the prefix was gone")

        let refused = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/curl"),
            [
                "-s", "-H", "authorization: Bearer sk-test", "-H", "content-type: application/json",
                "--data-binary", #"{"model":"gpt-4.1","input":"hi","prompt_cache_retention":"1h"}"#,
                day.sim.url + "/v1/responses",
            ], timeout: 10)
        let error =
            try #require(
                try JSONSerialization.jsonObject(with: Data(refused.stdout.utf8)) as? [String: Any])["error"]
            as? [String: Any]
        #expect(
            error?["message"] as? String
                == "Invalid value: '1h'. Supported values are: 'in_memory' and '24h'.")
    }

    @Test func openAIItselfGetsTheResponsesAPIAndEveryOtherServerChatCompletions() {
        func made(_ wire: OpenAIWire, _ baseURL: String) -> String {
            var options = ProviderOptions()
            options.openAIWire = wire
            return
                "\(type(of: ProviderKind.openai.make(apiKey: "k", baseURL: baseURL, options: options, logger: Self.logger)))"
        }
        #expect(made(.auto, "https://api.openai.com/v1") == "OpenAIResponsesProvider")
        #expect(made(.auto, "http://127.0.0.1:8080/v1") == "OpenAIProvider")
        #expect(made(.auto, "https://litellm.example/v1") == "OpenAIProvider")
        #expect(made(.responses, "http://127.0.0.1:8080/v1") == "OpenAIResponsesProvider")
        #expect(made(.chatCompletions, "https://api.openai.com/v1") == "OpenAIProvider")
    }

    /// A summarize job through the binary with `openai_api: responses`, batched prompts and single
    /// ones: every call goes to `/v1/responses`, and the ledger holds what the sim billed.
    @Test func aRunOnTheResponsesAPIIsBookedAsTheSimBilledIt() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml",
            "provider: openai\nbase_url: \(sim.url)/v1\nopenai_api: responses\nmodels: {openai: {fast: gpt-4.1-mini}}\n"
        )
        try workspace.writeDocuments(6)
        try workspace.write(
            "jobs/docs.yaml",
            "kind: summarize\ntier: fast\ninputs: [docs/*.md]\nmax_tokens: 100\nbatching: off\n")
        let run = try workspace.offpeak(["run", "docs"], environment: ["OPENAI_API_KEY": "sk-test"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("job docs: 6 of 6 items answered (6 now)\n"))
        let stats = try sim.stats()
        let endpoints = stats["by_endpoint"] as? [String: [String: Any]] ?? [:]
        #expect(endpoints["responses"]?["ok_calls"] as? Int == 6, "\(endpoints)")
        #expect(endpoints["chat_completions"]?["calls"] as? Int == 0)
        let costs = try FallbackRunTests.costsByModel(workspace, environment: ["OPENAI_API_KEY": "sk-test"])
        let line = try #require(costs["gpt-4.1-mini"])
        let billed = try sim.billed()
        #expect(line["calls"] as? Int == 6)
        #expect(line["input_tokens"] as? Int == billed["input_tokens"])
        #expect(line["output_tokens"] as? Int == billed["output_tokens"])
    }

    /// The batch lane of a provider speaking the Responses API: its batches stand for `/v1/responses`
    /// and their answers equal the live ones.
    @Test(.timeLimit(.minutes(1))) func itsBatchesStandForTheResponsesEndpoint() throws {
        let fixture = BatchAPIFixture(key: "sk-responses-batch")
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let provider = OpenAIResponsesProvider(
            apiKey: "sk-responses-batch", baseURL: sim.url + "/v1",
            options: fixture.options(retries: 0, timeout: 30),
            logger: Self.logger)
        let live = try fixture.prompts.map { try provider.complete(fixture.request($0)) }
        let api = try #require(provider.batches)
        let requests = fixture.batch("r1")
        let created = try api.create(label: "r1", requests: requests)
        let done = try fixture.ended(api, created.id)
        #expect(done.counts == RemoteBatch.Counts(succeeded: fixture.prompts.count))
        let listed =
            try JSONSerialization.jsonObject(
                with: try sim.request("GET", "/v1/batches")) as? [String: Any]
        let endpoints = (listed?["data"] as? [[String: Any]] ?? []).compactMap { $0["endpoint"] as? String }
        #expect(endpoints == ["/v1/responses"])
        let sent = Dictionary(uniqueKeysWithValues: requests.map { ($0.customID, $0.request) })
        for result in try api.results(of: done, requests: sent) {
            let index = try #require(Int(result.customID.dropFirst(3)))
            guard case .succeeded(let answer) = result.outcome else {
                Issue.record("\(result.customID): \(result.outcome)")
                continue
            }
            #expect(answer.text == live[index].text && answer.usage == live[index].usage)
        }
        let endpointsCalled = try sim.stats()["by_endpoint"] as? [String: [String: Any]]
        #expect(endpointsCalled?["responses"]?["ok_calls"] as? Int == fixture.prompts.count, "the live calls")
    }
}
