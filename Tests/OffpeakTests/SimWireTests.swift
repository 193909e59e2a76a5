import Foundation
import Testing

@testable import OffpeakSimKit

struct SimWireTests {
    private func anthropic(_ json: String) throws -> ParsedCall {
        try AnthropicRoutes().parse(Data(json.utf8))
    }

    private func openAI(_ json: String) throws -> ParsedCall {
        try OpenAIRoutes().parse(Data(json.utf8))
    }

    private func message(of body: () throws -> ParsedCall) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as SimAPIError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func anthropicRequestWithCachedSystemBlocks() throws {
        let call = try anthropic(
            """
            {"model":"claude","max_tokens":50,"temperature":0.2,
             "system":[{"type":"text","text":"abcd","cache_control":{"type":"ephemeral"}},{"type":"text","text":"ef"}],
             "messages":[{"role":"user","content":[{"type":"text","text":"Hello."}]},{"role":"assistant","content":"Hi"}]}
            """)
        #expect(call.model == "claude")
        #expect(call.maxTokens == 50)
        #expect(call.conversation.inputTokens == 1 + 1 + 2 + 1)
        #expect(call.conversation.markedSystemPrefix == CacheablePrefix(text: "abcd", tokens: 1))
        #expect(call.conversation.lastUserText == "Hello.")
    }

    @Test func anthropicErrorsNameTheField() {
        #expect(
            message { try anthropic(#"{"model":"m","messages":[{"role":"user","content":"x"}]}"#) }
                == "max_tokens: field required")
        #expect(
            message {
                try anthropic(#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":7}]}"#)
            }
                == "messages.0.content: expected a string or an array of content blocks")
        #expect(
            message {
                try anthropic(#"{"model":"m","max_tokens":5,"messages":[{"role":"robot","content":"x"}]}"#)
            }
                == "messages.0.role: expected 'user' or 'assistant', got 'robot'")
        #expect(message { try anthropic(#"{"max_tokens":5,"messages":[]}"#) } == "model: field required")
        #expect(message { try anthropic("") } == "request body is empty; expected a JSON object")
        #expect(message { try anthropic("{not json") }?.hasPrefix("request body is not valid JSON") == true)
    }

    @Test func openAIRequestMovesSystemAndDeveloperTextAside() throws {
        let call = try openAI(
            """
            {"model":"gpt","max_completion_tokens":9,"messages":[
              {"role":"system","content":"abcdefgh"},{"role":"developer","content":[{"type":"text","text":"abcd"}]},
              {"role":"user","content":"Question?"}]}
            """)
        #expect(call.maxTokens == 9)
        #expect(call.conversation.system.map(\.text) == ["abcdefgh", "abcd"])
        #expect(call.conversation.systemPrefix?.tokens == 3)
        #expect(call.conversation.inputTokens == 2 + 1 + 3)
        #expect(try openAI(#"{"model":"gpt","messages":[{"role":"user","content":"x"}]}"#).maxTokens == 4096)
        #expect(
            try openAI(#"{"model":"gpt","max_tokens":7,"messages":[{"role":"user","content":"x"}]}"#)
                .maxTokens == 7)
    }

    @Test func openAIErrorsNameTheField() {
        #expect(
            message { try openAI(#"{"model":"m","messages":[]}"#) }
                == "messages: at least one message is required")
        #expect(message { try openAI(#"{"model":"m","messages":"hi"}"#) } == "messages: expected an array")
        #expect(
            message { try openAI(#"{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}"#) }
                == "stream: streaming is not supported by offpeak-sim")
    }
}
