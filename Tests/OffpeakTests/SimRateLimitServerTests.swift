import Foundation
import OffpeakTestSupport
import Testing

/// The built `offpeak-sim` with rate limits, over HTTP as clients see it: the limit headers on
/// every answer in each API's shape, the 429 with `retry-after` once over a limit, and the load
/// counters of `/sim/stats`.
@Suite(.ownThreads) struct SimRateLimitServerTests {
    /// One answer as curl saw it: status, headers (names lowercased) and body.
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: [String: Any]
    }

    static let messages = "/v1/messages"
    static let chat = "/v1/chat/completions"
    /// The `max_tokens` of every call `call` sends.
    static let maxTokens = 20

    /// The curl command line of one call; `Process` objects of it can run side by side.
    static func curlArguments(_ sim: SimProcess, _ path: String) -> [String] {
        let body = #"{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"Hello there."}]}"#
        let key = path == messages ? "x-api-key: sim" : "authorization: Bearer sim"
        return [
            "-s", "-i", "-X", "POST", sim.url + path, "-H", "content-type: application/json", "-H", key,
            "--data-binary", body,
        ]
    }

    static func call(_ sim: SimProcess, _ path: String) throws -> Reply {
        let result = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/curl"), curlArguments(sim, path), timeout: 30)
        let parts = result.stdout.components(separatedBy: "\r\n\r\n")
        let head = parts.first?.components(separatedBy: "\r\n") ?? []
        let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let text = parts.dropFirst().joined(separator: "\r\n\r\n")
        let body = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
        return Reply(status: status, headers: headers, body: body)
    }

    private func limitHeaderNames(_ reply: Reply) -> Set<String> {
        Set(
            reply.headers.keys.filter { $0.hasPrefix("anthropic-ratelimit-") || $0.hasPrefix("x-ratelimit-") }
        )
    }

    private func date(_ text: String?) throws -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return try #require(text.flatMap { formatter.date(from: $0) }, "not RFC 3339: \(text ?? "nil")")
    }

    @Test func everyAnthropicAnswerCarriesItsLimitHeaders() throws {
        let sim = try SimProcess(arguments: ["--rpm", "5", "--input-tpm", "40000", "--output-tpm", "8000"])
        let before = Date()
        let reply = try Self.call(sim, Self.messages)
        #expect(reply.status == 200)
        let h = reply.headers
        #expect(h["anthropic-ratelimit-requests-limit"] == "5")
        #expect(h["anthropic-ratelimit-requests-remaining"] == "4")
        #expect(h["anthropic-ratelimit-input-tokens-limit"] == "40000")
        #expect(h["anthropic-ratelimit-input-tokens-remaining"] == "40000", "rounded to the nearest thousand")
        #expect(h["anthropic-ratelimit-output-tokens-limit"] == "8000")
        #expect(h["anthropic-ratelimit-output-tokens-remaining"] == "8000")
        #expect(h["anthropic-ratelimit-tokens-limit"] == "48000", "input and output together")
        #expect(h["anthropic-ratelimit-tokens-remaining"] == "48000")
        // One request of 5 a minute comes back in 12 s: full again then, in RFC 3339.
        let reset = try date(h["anthropic-ratelimit-requests-reset"])
        #expect(reset > before.addingTimeInterval(10) && reset < Date().addingTimeInterval(14))
        _ = try date(h["anthropic-ratelimit-tokens-reset"])
        #expect(limitHeaderNames(reply).count == 12)
        #expect(!limitHeaderNames(reply).contains { $0.hasPrefix("x-ratelimit-") })
    }

    @Test func everyOpenAIAnswerCarriesItsLimitHeaders() throws {
        let sim = try SimProcess(arguments: ["--rpm", "5", "--tpm", "10000"])
        let reply = try Self.call(sim, Self.chat)
        #expect(reply.status == 200)
        let h = reply.headers
        #expect(h["x-ratelimit-limit-requests"] == "5")
        #expect(h["x-ratelimit-remaining-requests"] == "4")
        #expect(h["x-ratelimit-limit-tokens"] == "10000")
        let usage = try #require(reply.body["usage"] as? [String: Any])
        let input = try #require(usage["prompt_tokens"] as? Int)
        // The headers are the limits as they stood when the call was admitted, with its whole
        // max_tokens reserved (as OpenAI counts a request against its TPM); a few tokens flow back
        // in meanwhile.
        let remaining = try #require(h["x-ratelimit-remaining-tokens"].flatMap { Int($0) })
        let reserved = input + Self.maxTokens
        #expect(
            (10000 - reserved)...(10000 - reserved + 100) ~= remaining,
            "\(remaining) for \(reserved) reserved")
        let reset = try #require(h["x-ratelimit-reset-requests"])
        #expect(reset.wholeMatch(of: /1[12](\.\d{1,3})?s/) != nil, "a Go duration near 12 s: \(reset)")
        #expect(
            limitHeaderNames(reply) == [
                "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests",
                "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens",
            ])
    }

    @Test func withoutLimitsNoLimitHeadersAreSent() throws {
        let sim = try SimProcess()
        for path in [Self.messages, Self.chat] {
            let reply = try Self.call(sim, path)
            #expect(reply.status == 200)
            #expect(limitHeaderNames(reply).isEmpty)
        }
    }

    @Test(arguments: [messages, chat])
    func overTheLimitTheSimAnswers429WithRetryAfter(path: String) throws {
        let sim = try SimProcess(arguments: ["--rpm", "2"])
        #expect(try Self.call(sim, path).status == 200)
        #expect(try Self.call(sim, path).status == 200)
        let refused = try Self.call(sim, path)
        #expect(refused.status == 429)
        #expect(refused.headers["retry-after"] == "30", "2 a minute: one more in 30 s")
        let error = try #require(refused.body["error"] as? [String: Any])
        let message = try #require(error["message"] as? String)
        #expect(
            message.hasPrefix(
                "offpeak-sim: this request would exceed the rate limit of 2 requests per minute (offpeak-sim --rpm); "
            ), "\(message)")
        if path == Self.messages {
            #expect(refused.body["type"] as? String == "error")
            #expect(error["type"] as? String == "rate_limit_error")
            #expect(refused.headers["anthropic-ratelimit-requests-remaining"] == "0")
        } else {
            #expect(error["type"] as? String == "requests")
            #expect(error["code"] as? String == "rate_limit_exceeded")
            #expect(refused.headers["x-ratelimit-remaining-requests"] == "0")
        }
        let stats = try sim.stats()
        #expect(stats["calls"] as? Int == 3)
        #expect(stats["ok_calls"] as? Int == 2)
        #expect(stats["rate_limited"] as? Int == 1)
        #expect((stats["rate_limited_by"] as? [String: Int])?["requests"] == 1)
        #expect((stats["faults"] as? [String: Int])?["429"] == 0, "the limiter's 429s are not faults")
    }

    @Test func aRefusedCallTakesNoQueuedFault() throws {
        let sim = try SimProcess(arguments: ["--rpm", "1"])
        #expect(try Self.call(sim, Self.messages).status == 200)
        try sim.queueFaults(["500"])
        #expect(try Self.call(sim, Self.messages).status == 429)
        #expect((try sim.stats()["faults"] as? [String: Int])?["500"] == 0)
        #expect(try sim.request("GET", "/sim/faults") == Data(#"{"next":["500"]}"#.utf8))
    }

    @Test func statsKeepTheMostCallsInFlightAtOnce() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "2000"])
        let calls = try (0..<4).map { _ in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = Self.curlArguments(sim, Self.messages)
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }
        for process in calls { process.waitUntilExit() }
        var stats = try sim.stats()
        #expect(stats["ok_calls"] as? Int == 4)
        #expect(stats["max_in_flight"] as? Int == 4)
        #expect(stats["in_flight"] as? Int == 0)
        _ = try sim.request("POST", "/sim/reset")
        stats = try sim.stats()
        #expect(stats["max_in_flight"] as? Int == 0)
        #expect(stats["rate_limited"] as? Int == 0)
    }

    @Test(arguments: [
        (["--jitter", "1.5"], "--jitter must be in 0...1"), (["--rpm", "0"], "--rpm must be at least 1"),
        (["--tpm=-5"], "--tpm must be at least 1"),
    ])
    func badLatencyAndLimitFlagsAreUsageErrors(arguments: [String], message: String) throws {
        let result = try CommandResult.run(BuiltBinaries.sim, arguments, timeout: 30)
        #expect(result.status == 64)
        #expect(
            result.stderr
                == "Error: \(message)\nUsage: offpeak-sim <options>\n  See 'offpeak-sim --help' for more information.\n"
        )
    }
}
