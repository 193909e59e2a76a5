import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A loopback server that answers every POST as an API would, with the rate-limit headers the API
/// sends: Anthropic's on `/v1/messages`, OpenAI's on `/v1/chat/completions`; under `/busy/` it
/// answers 429 with them and `retry-after: 3`. Exits when its stdin closes or after two minutes.
final class RateLimitHeaderServer {
    static let script = #"""
        import http.server, json, os, signal, sys, threading, time
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        threading.Timer(120, os._exit, [0]).start()
        ANTHROPIC = {"id": "msg_1", "model": "claude-x", "stop_reason": "end_turn",
                     "content": [{"type": "text", "text": "hi"}],
                     "usage": {"input_tokens": 5, "output_tokens": 1}}
        OPENAI = {"id": "chatcmpl-1", "model": "gpt-x",
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                               "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 5, "completion_tokens": 1}}
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                busy = self.path.startswith("/busy/")
                reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 20))
                if self.path.endswith("/v1/messages"):
                    body, headers = ANTHROPIC, [
                        ("anthropic-ratelimit-requests-limit", "50"),
                        ("anthropic-ratelimit-requests-remaining", "0" if busy else "49"),
                        ("anthropic-ratelimit-requests-reset", reset),
                        ("anthropic-ratelimit-tokens-limit", "40000"),
                        ("anthropic-ratelimit-tokens-remaining", "39000"),
                        ("anthropic-ratelimit-tokens-reset", reset)]
                else:
                    body, headers = OPENAI, [
                        ("x-ratelimit-limit-requests", "60"),
                        ("x-ratelimit-remaining-requests", "0" if busy else "59"),
                        ("x-ratelimit-reset-requests", "20s"),
                        ("x-ratelimit-limit-tokens", "150000"),
                        ("x-ratelimit-remaining-tokens", "149984"),
                        ("x-ratelimit-reset-tokens", "6m0s")]
                if busy:
                    body = {"error": {"type": "rate_limit_error", "message": "slow down"}}
                    headers.append(("retry-after", "3"))
                data = json.dumps(body).encode()
                self.send_response(429 if busy else 200)
                for name, value in headers: self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    let process = Process()
    let input = Pipe()
    let url: String

    init() throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script]
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            try? input.fileHandleForWriting.close()
            process.terminate()
            throw CocoaError(.fileReadUnknown)
        }
        url = "http://127.0.0.1:\(port)"
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.terminate()
    }
}

/// A call's reply carries the rate-limit headers of its last response, answered or failed, with
/// its attempts and how many the provider pushed back; `complete` is unchanged.
@Suite(.ownThreads) struct CallReplyTests {
    let logger = Logger(label: "test")
    let request = CompletionRequest(
        model: "m", messages: [ChatMessage(role: .user, content: "Hello there.")], maxTokens: 20)

    func provider(_ kind: ProviderKind, baseURL: String, retries: Int = 0) -> any CompletionProvider {
        let options = ProviderOptions(retryPolicy: RetryPolicy(maxRetries: retries), sleep: { _ in })
        switch kind {
        case .openai:
            return OpenAIProvider(apiKey: "k", baseURL: baseURL + "/v1", options: options, logger: logger)
        default:
            return AnthropicProvider(
                apiKey: "k", baseURL: baseURL, kind: kind, options: options, logger: logger)
        }
    }

    /// What the server sent about requests, and when that arrived.
    func requests(_ reply: CallReply) -> RateLimitHeaders.Allowance? { reply.rateLimit.requests }

    @Test(.timeLimit(.minutes(1)), arguments: [ProviderKind.anthropic, .openai])
    func anAnswerCarriesItsHeaders(kind: ProviderKind) throws {
        let server = try RateLimitHeaderServer()
        let before = Date()
        let reply = provider(kind, baseURL: server.url).call(request)
        let after = Date()
        let answer = try reply.answer.get()
        #expect(answer.text == "hi" && answer.usage == Usage(input: 5, output: 1))
        #expect(reply.attempts == 1 && reply.throttledAttempts == 0 && reply.rateLimit.retryAt == nil)
        let requests = try #require(reply.rateLimit.requests)
        let reset = try #require(requests.resetsAt)
        if kind == .anthropic {
            #expect(requests.limit == 50 && requests.remaining == 49)
            #expect(reset >= before + 19 && reset <= after + 20)  // RFC 3339 to the second
            #expect(reply.rateLimit.tokens == .init(limit: 40_000, remaining: 39_000, resetsAt: reset))
        } else {
            #expect(requests.limit == 60 && requests.remaining == 59)
            #expect(reset >= before + 20 && reset <= after + 20)
            #expect(reply.rateLimit.tokens?.remaining == 149_984)
        }
        #expect(try provider(kind, baseURL: server.url).complete(request) == answer)
    }

    @Test(.timeLimit(.minutes(1)), arguments: [ProviderKind.anthropic, .openai])
    func aRefusalCarriesItsHeaders(kind: ProviderKind) throws {
        let server = try RateLimitHeaderServer()
        let before = Date()
        let reply = provider(kind, baseURL: server.url + "/busy").call(request)
        let after = Date()
        let called = server.url + (kind == .openai ? "/busy/v1/chat/completions" : "/busy/v1/messages")
        #expect(throws: ProviderError.http(status: 429, message: "slow down", url: called)) {
            try reply.answer.get()
        }
        #expect(reply.attempts == 1 && reply.throttledAttempts == 1)
        #expect(requests(reply)?.remaining == 0)
        let retryAt = try #require(reply.rateLimit.retryAt)
        #expect(retryAt >= before + 3 && retryAt <= after + 3)
        #expect(CallOutcome(reply) == .throttled)
    }

    /// Against offpeak-sim: a 429, 529 (503 on the OpenAI endpoint) is push-back on every attempt,
    /// retries included; a 500 is not; the last `retry-after` comes back.
    @Test(
        .timeLimit(.minutes(1)),
        arguments: [ProviderKind.anthropic, .openai], [("429", 3), ("529", 3), ("500", 0)])
    func retriesAreCounted(kind: ProviderKind, fault: (name: String, throttled: Int)) throws {
        let sim = try SimProcess(arguments: ["--fault-rate", "\(fault.name)=1", "--retry-after", "0"])
        let reply = provider(kind == .anthropic ? .sim : .openai, baseURL: sim.url, retries: 2).call(request)
        #expect(throws: ProviderError.self) { try reply.answer.get() }
        #expect(reply.attempts == 3)
        #expect(reply.throttledAttempts == fault.throttled)
        #expect(CallOutcome(reply) == (fault.throttled > 0 ? .throttled : .failed))
        if fault.name == "429" { #expect(reply.rateLimit.retryAt != nil) }
    }

    /// A request that never left (no body could be made) took no attempt; nothing was reported.
    @Test func aCallThatNeverLeftReportsNothing() {
        let reply = provider(.anthropic, baseURL: "http://127.0.0.1:9").call(
            CompletionRequest(model: "m", messages: [], maxTokens: 1, temperature: .nan))
        #expect(reply.attempts == 0 && reply.rateLimit == .none)
        #expect(throws: ProviderError.self) { try reply.answer.get() }
    }
}
