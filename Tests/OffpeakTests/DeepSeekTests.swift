import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 48, item 2: DeepSeek as a provider. It speaks OpenAI's chat completions with its own usage
/// fields (cache hits and misses), its JSON output mode (`json_object`, no schema), no batch API,
/// and prices that halve off-peak. offpeak-sim speaks it at `/chat/completions`, on its own clock.
@Suite(.ownThreads) struct DeepSeekTests {
    static let logger = Logger(label: "test")

    @Test func theRequestAsksForJSONOutputModeAndTheUsageIsReadFromItsCacheFields() throws {
        var request = CompletionRequest(
            model: "deepseek-flash", system: "Answer in JSON.", messages: [.init(role: .user, content: "hi")],
            maxTokens: 100)
        request.answerKeys = ["a", "b"]
        let body = try DeepSeekProvider.requestBody(for: request)
        let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(json["response_format"] as? [String: String] == ["type": "json_object"])
        #expect(json["service_tier"] == nil && json["max_tokens"] as? Int == 100)
        #expect(throws: ProviderError.self) { try DeepSeekProvider.requestBody(for: request, lane: .flex) }

        let answer = Data(
            """
            {"id": "x", "object": "chat.completion", "created": 1795000000, "model": "deepseek-flash",
             "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050,
                       "prompt_cache_hit_tokens": 640, "prompt_cache_miss_tokens": 360}}
            """.utf8)
        let response = try DeepSeekProvider.parseResponse(
            answer, for: request, redactor: Redactor(environment: [:]))
        #expect(response.usage == Usage(input: 360, output: 50, cacheRead: 640))
        #expect(!response.usageEstimated)

        let provider = ProviderKind.deepseek
        #expect(provider.capabilities.environment.key == "DEEPSEEK_API_KEY")
        #expect(provider.capabilities.environment.defaultBaseURL == "https://api.deepseek.com")
        let made = provider.make(
            apiKey: "k", baseURL: "https://api.deepseek.com", options: ProviderOptions(), logger: Self.logger)
        #expect(made.batches == nil && made.kind == .deepseek)
        #expect(
            ProviderLimits(inFlight: 5_000).inFlight(for: .deepseek, baseURL: "https://api.deepseek.com")
                == 500)
        #expect(ProviderLimits().inFlight(for: .deepseek, baseURL: "https://api.deepseek.com") == 8)
    }

    /// The sim at a Monday's 07:00 UTC: peak hours. Its DeepSeek answers carry the cache's hits in
    /// whole units of 64 tokens, no `prompt_tokens_details`, and are counted as billed at peak.
    @Test func theSimSpeaksDeepSeekOnItsOwnClock() throws {
        let peak = try PriceWindowsTests.at("2026-11-30T07:00:00Z").timeIntervalSinceNow
        let sim = try SimProcess(arguments: ["--clock-offset", "\(peak)", "--require-key", "sk-ds"])
        let system = String(repeating: "You answer questions about the weather in JSON. ", count: 20)
        func ask(_ format: String? = nil) throws -> [String: Any] {
            var body: [String: Any] = [
                "model": "deepseek-flash", "max_tokens": 50,
                "messages": [["role": "system", "content": system], ["role": "user", "content": "Rain?"]],
            ]
            if let format { body["response_format"] = ["type": format] }
            let data = try JSONSerialization.data(withJSONObject: body)
            let result = try CommandResult.run(
                URL(fileURLWithPath: "/usr/bin/curl"),
                [
                    "-s", "-H", "authorization: Bearer sk-ds", "-H", "content-type: application/json",
                    "--data-binary",
                    String(decoding: data, as: UTF8.self), sim.url + "/deepseek/chat/completions",
                ], timeout: 10)
            return try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        }
        let first = try #require(try ask()["usage"] as? [String: Any])
        #expect(first["prompt_cache_hit_tokens"] as? Int == 0)
        #expect(first["prompt_tokens_details"] == nil)
        let second = try #require(try ask("json_object")["usage"] as? [String: Any])
        let hit = try #require(second["prompt_cache_hit_tokens"] as? Int)
        let miss = try #require(second["prompt_cache_miss_tokens"] as? Int)
        #expect(hit > 0 && hit % 64 == 0, "whole units of 64 tokens")
        #expect(hit + miss == second["prompt_tokens"] as? Int)
        let refused = try ask("json_schema")
        #expect(
            (refused["error"] as? [String: Any])?["message"] as? String
                == "This response_format type is unavailable now")

        let stats = try sim.stats()
        let windows = try #require(stats["billed_by_window"] as? [String: [String: Int]])
        #expect(Set(windows.keys) == ["peak"])
        #expect(windows["peak"]?["cache_read_input_tokens"] == hit)
        #expect((stats["by_endpoint"] as? [String: [String: Int]])?["deepseek"]?["ok_calls"] == 2)
    }

    /// A sim whose clock runs behind the machine's, given as a user types it (`--clock-offset -N`, a
    /// value that looks like an option): it starts, makes its answers at its own time and bills by
    /// it. (A test that set a clock a few minutes in the past failed to start its sim.)
    @Test func theSimsClockMayRunBehindTheMachines() throws {
        let instant = try PriceWindowsTests.at("2026-11-29T20:00:00Z")
        let behind = instant.timeIntervalSinceNow
        #expect(behind < 0)
        let sim = try SimProcess(arguments: ["--clock-offset", String(Int(behind))])
        let body =
            #"{"model":"deepseek-flash","max_tokens":20,"messages":[{"role":"user","content":"Rain?"}]}"#
        let result = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/curl"),
            [
                "-s", "-H", "authorization: Bearer k", "-H", "content-type: application/json",
                "--data-binary", body, sim.url + "/deepseek/chat/completions",
            ], timeout: 10)
        let answer = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let created = try #require(answer["created"] as? Int)
        #expect(abs(Double(created) - instant.timeIntervalSince1970) < 120, "\(created)")
        let windows = try #require(try sim.stats()["billed_by_window"] as? [String: [String: Int]])
        #expect(Set(windows.keys) == ["off-peak"], "a Sunday's 20:00 UTC is off-peak")
    }

    /// A run that crosses 01:00 UTC on a Monday, when DeepSeek's peak prices begin, on a clock the
    /// test moved (the run's and the sim's, by the same offset): each call is priced in the window
    /// it was billed in, and the ledger's dollars are the sim's bill at DeepSeek's prices.
    @Test func theLedgerIsWhatDeepSeekBilledAcrossTheStartOfPeakHours() throws {
        let offset = try PriceWindowsTests.at("2026-11-30T00:59:55Z").timeIntervalSinceNow
        let sim = try SimProcess(arguments: ["--clock-offset", "\(offset)", "--latency-ms", "400"])
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml",
            "provider: deepseek\nbase_url: \(sim.url)/deepseek\nlimits: {deepseek: {in_flight: 1}}\nhttp: {max_retries: 1}\n"
        )
        let items = (1...20).map { "  - {id: q\($0), text: \"Question number \($0) about the tides?\"}" }
        try workspace.write(
            "jobs/tides.yaml",
            "kind: prompt\ntemplate: \"Answer: {{text}}\"\nbatching: off\nitems:\n"
                + items.joined(separator: "\n") + "\n")
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root),
            environment: try workspace.environment(["DEEPSEEK_API_KEY": "sk-ds"]), logger: Self.logger)
        var options = JobRunner.Options()
        options.clock = { Date().addingTimeInterval(offset) }
        let outcome = try context.run(try context.loadJob("tides"), options: options)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.spend.calls == 20)

        let windows = try #require(try sim.stats()["billed_by_window"] as? [String: [String: Int]])
        #expect(windows["off-peak"] != nil && windows["peak"] != nil, "the run crossed 01:00: \(windows)")
        // The job's tier is `balanced`: deepseek-v4-pro.
        let price = try #require(PriceTable.bundled.cost(of: "deepseek-v4-pro"))
        let billed = windows.reduce(0.0) { sum, window in
            let at =
                window.key == "peak"
                ? try? PriceWindowsTests.at("2026-11-30T07:00:00Z")
                : try? PriceWindowsTests.at("2026-11-30T12:00:00Z")
            let tokens = window.value
            return sum
                + price.at(at ?? Date()).dollars(
                    for: Usage(
                        input: tokens["input_tokens"] ?? 0, output: tokens["output_tokens"] ?? 0,
                        cacheRead: tokens["cache_read_input_tokens"] ?? 0),
                    lane: .live)
        }
        #expect(
            abs(outcome.spend.dollars - billed) < 1e-12,
            "the ledger \(outcome.spend.dollars) \(outcome.spend), billed \(billed) \(windows)")
        let offPeak = price.at(try PriceWindowsTests.at("2026-11-30T12:00:00Z"))
        let allOffPeak = offPeak.dollars(
            for: Usage(
                input: outcome.spend.inputTokens, output: outcome.spend.outputTokens,
                cacheRead: outcome.spend.cacheReadTokens), lane: .live)
        #expect(outcome.spend.dollars > allOffPeak * 1.01, "the calls after 01:00 cost double")
    }
}
