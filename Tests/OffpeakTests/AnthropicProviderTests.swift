import Foundation
import Logging
import Testing

@testable import Offpeak

struct AnthropicProviderTests {
    let request = CompletionRequest(
        model: "claude-haiku-4-5", system: "Be brief.",
        messages: [ChatMessage(role: .user, content: "Hi there")],
        maxTokens: 256)

    func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func parse(_ text: String) throws(ProviderError) -> CompletionResponse {
        try AnthropicProvider.parseResponse(Data(text.utf8), for: request, redactor: .shapes)
    }

    @Test func bodyHasOnlyWhatIsSet() throws {
        let body = try json(AnthropicProvider.requestBody(for: request))
        #expect(body["model"] as? String == "claude-haiku-4-5")
        #expect(body["max_tokens"] as? Int == 256)
        #expect(body["system"] as? String == "Be brief.")
        let messages = try #require(body["messages"] as? [[String: Any]])
        #expect(messages.count == 1 && messages[0]["role"] as? String == "user")
        #expect(messages[0]["content"] as? String == "Hi there")
        for absent in ["temperature", "top_p", "stop_sequences"] { #expect(body[absent] == nil) }
    }

    @Test func bodyCarriesSamplingStopsAndCacheBreakpoint() throws {
        var cached = request
        cached.temperature = 0.2
        cached.topP = 0.9
        cached.stop = ["END"]
        cached.cacheSystemPrompt = true
        // Long enough for claude-haiku-4-5 to cache (4,096 tokens): a shorter one is sent unmarked.
        cached.system = "Be brief." + String(repeating: " Keep to the point.", count: 900)
        let body = try json(AnthropicProvider.requestBody(for: cached))
        #expect(body["temperature"] as? Double == 0.2)
        #expect(body["top_p"] as? Double == 0.9)
        #expect(body["stop_sequences"] as? [String] == ["END"])
        let system = try #require(body["system"] as? [[String: Any]])
        #expect(
            system.count == 1 && system[0]["type"] as? String == "text"
                && system[0]["text"] as? String == cached.system)
        #expect((system[0]["cache_control"] as? [String: String]) == ["type": "ephemeral"])
    }

    @Test func parsesTextStopAndAdditiveCacheUsage() throws {
        let answer = try parse(
            """
            {"id": "msg_1", "type": "message", "model": "claude-haiku-4-5-20251001",
             "content": [{"type": "text", "text": "Hello"}, {"type": "thinking", "thinking": "hm"},
                         {"type": "text", "text": ", world"}],
             "stop_reason": "end_turn",
             "usage": {"input_tokens": 12, "output_tokens": 5, "cache_creation_input_tokens": 100,
                       "cache_read_input_tokens": 2000}}
            """)
        #expect(answer.text == "Hello, world")
        #expect(answer.finishReason == .stop)
        #expect(answer.usage == Usage(input: 12, output: 5, cacheRead: 2000, cacheWrite: 100))
        #expect(answer.model == "claude-haiku-4-5-20251001" && answer.id == "msg_1" && !answer.usageEstimated)
    }

    @Test func mapsStopReasons() throws {
        func reason(_ value: String) throws -> FinishReason {
            try parse(
                #"{"content": [], "stop_reason": "\#(value)", "usage": {"input_tokens": 1, "output_tokens": 1}}"#
            )
            .finishReason
        }
        #expect(try reason("stop_sequence") == .stop)
        #expect(try reason("max_tokens") == .length)
        #expect(try reason("refusal") == .other)
    }

    @Test func nullCacheFieldsCountZero() throws {
        let answer = try parse(
            #"{"content": [{"type": "text", "text": "x"}], "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 1, "cache_creation_input_tokens": null}}"#
        )
        #expect(answer.usage == Usage(input: 3, output: 1))
    }

    @Test func missingUsageIsEstimated() throws {
        let answer = try parse(
            #"{"content": [{"type": "text", "text": "12345678"}], "stop_reason": "end_turn"}"#)
        #expect(answer.usageEstimated)
        #expect(answer.usage == Usage(input: TokenEstimator.inputTokens(request), output: 2))
        #expect(answer.model == "claude-haiku-4-5")
    }

    @Test func unreadableAnswersNameWhatIsWrong() {
        #expect(throws: ProviderError.badResponse("answer lacks `content`")) {
            try parse(#"{"id": "msg_1", "stop_reason": "end_turn"}"#)
        }
        #expect(throws: ProviderError.badResponse("answer lacks `content[0].type`")) {
            try parse(#"{"content": [{"text": "x"}]}"#)
        }
        #expect(throws: ProviderError.badResponse("answer is not JSON: <html>oops</html>")) {
            try parse("<html>oops</html>")
        }
    }

    @Test func errorBodiesGiveMessageOrSnippet() {
        let typed = ProviderTransport.errorDetails(
            in: Data(#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.utf8),
            redactor: .shapes)
        #expect(typed.message == "Overloaded" && typed.code == "overloaded_error")
        let html = ProviderTransport.errorDetails(
            in: Data(
                "<html>\n  <body>502 Bad Gateway</body>\n</html>\(String(repeating: "x", count: 300))".utf8),
            redactor: .shapes)
        #expect(html.message.hasPrefix("<html> <body>502 Bad Gateway</body> </html>xxx"))
        #expect(html.message.count == 200 && html.code == nil)
        #expect(ProviderTransport.errorDetails(in: Data(), redactor: .shapes).message == "empty body")
    }

    @Test func endpointJoinsWithOneSlash() {
        #expect(
            ProviderTransport.endpoint("https://api.anthropic.com/", "/v1/messages")
                == "https://api.anthropic.com/v1/messages")
        #expect(
            ProviderTransport.endpoint("http://127.0.0.1:8089", "/v1/messages")
                == "http://127.0.0.1:8089/v1/messages")
    }

    @Test func factoryReadsKeysAndBaseURLs() throws {
        let logger = Logger(label: "test")
        var config = WorkspaceConfig()
        #expect(throws: ProviderError.missingKey(variable: "ANTHROPIC_API_KEY")) {
            try ProviderFactory.make(config: config, environment: ["ANTHROPIC_API_KEY": " "], logger: logger)
        }
        let anthropic = try ProviderFactory.make(
            config: config,
            environment: ["ANTHROPIC_API_KEY": "sk-secret", "ANTHROPIC_BASE_URL": "http://proxy"],
            logger: logger)
        #expect((anthropic as? AnthropicProvider)?.baseURL == "http://proxy")
        #expect(!"\(anthropic)".contains("sk-secret"))
        config.provider = .sim
        let sim = try ProviderFactory.make(config: config, environment: [:], logger: logger)
        #expect(sim.kind == .sim && (sim as? AnthropicProvider)?.baseURL == "http://127.0.0.1:8089")
        config.baseURL = "http://127.0.0.1:9999"
        let configured = try ProviderFactory.make(
            config: config, environment: ["OFFPEAK_SIM_URL": "http://elsewhere"], logger: logger)
        #expect((configured as? AnthropicProvider)?.baseURL == "http://127.0.0.1:9999")
        config.provider = .openai
        config.baseURL = nil
        #expect(throws: ProviderError.missingKey(variable: "OPENAI_API_KEY")) {
            try ProviderFactory.make(config: config, environment: [:], logger: logger)
        }
        let openai = try ProviderFactory.make(
            config: config, environment: ["OPENAI_API_KEY": "k"], logger: logger)
        #expect(
            openai.kind == .openai
                && (openai as? OpenAIResponsesProvider)?.baseURL == "https://api.openai.com/v1",
            "OpenAI itself is spoken to through its Responses API")
    }
}
