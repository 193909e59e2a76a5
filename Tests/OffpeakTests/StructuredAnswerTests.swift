import Foundation
import Testing

@testable import Offpeak

/// Batched prompts asking for their answer in each provider's structured-output form.
struct StructuredAnswerTests {
    static func batched(keys: [String]?) -> CompletionRequest {
        CompletionRequest(
            model: "m", system: "You label tickets.",
            messages: [ChatMessage(role: .user, content: "items")], maxTokens: 100, cacheSystemPrompt: true,
            answerKeys: keys)
    }

    static func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func openAIAsksForAStrictSchemaOfExactlyTheBatchsIds() throws {
        let body = try Self.object(
            try OpenAIProvider.requestBody(for: Self.batched(keys: ["iab12", "icd34"])))
        let format = try #require(body["response_format"] as? [String: Any])
        #expect(format["type"] as? String == "json_schema")
        let schema = try #require(format["json_schema"] as? [String: Any])
        #expect(schema["name"] as? String == "record_answers")
        #expect(schema["strict"] as? Bool == true)
        let inner = try #require(schema["schema"] as? [String: Any])
        #expect(inner["required"] as? [String] == ["iab12", "icd34"])
        #expect(inner["additionalProperties"] as? Bool == false, "not additional_properties")
        let properties = try #require(inner["properties"] as? [String: [String: String]])
        #expect(properties == ["iab12": ["type": "string"], "icd34": ["type": "string"]])
    }

    @Test func anthropicForcesOneToolWhoseSchemaIsTheSameForEveryBatch() throws {
        let first = try Self.object(try AnthropicProvider.requestBody(for: Self.batched(keys: ["iab12"])))
        let second = try Self.object(
            try AnthropicProvider.requestBody(for: Self.batched(keys: ["ixy99", "izz00"])))
        let tools = try #require(first["tools"] as? [[String: Any]])
        #expect(tools.count == 1)
        #expect(tools.first?["name"] as? String == "record_answers")
        let schema = try #require(tools.first?["input_schema"] as? [String: Any])
        #expect(schema["additionalProperties"] as? [String: String] == ["type": "string"])
        #expect(first["tool_choice"] as? [String: String] == ["type": "tool", "name": "record_answers"])
        let again = try #require(second["tools"] as? [[String: Any]])
        #expect(
            NSDictionary(dictionary: tools[0]).isEqual(to: again[0]),
            "tools come first in the cached prefix: a schema naming each batch's ids would miss the cache")
    }

    @Test func aRequestWithoutTheFormSendsNoneAndKeepsItsCacheKey() throws {
        let plain = Self.batched(keys: nil)
        #expect(try Self.object(try OpenAIProvider.requestBody(for: plain))["response_format"] == nil)
        let anthropic = try Self.object(try AnthropicProvider.requestBody(for: plain))
        #expect(anthropic["tools"] == nil && anthropic["tool_choice"] == nil)
        #expect(!CanonicalJSON.text(plain).contains("answerKeys"), "cache keys of stored requests unchanged")
    }

    @Test func aForcedToolCallIsReadAsTheBatchedAnswer() throws {
        let body = """
            {"id":"msg_1","model":"m","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_1",
            "name":"record_answers","input":{"iab12":"billing","icd34":"outage"}}],
            "usage":{"input_tokens":10,"output_tokens":5}}
            """
        let answer = try AnthropicProvider.parseResponse(
            Data(body.utf8), for: Self.batched(keys: nil), redactor: .shapes)
        #expect(answer.finishReason == .stop)
        #expect(answer.text == #"{"iab12":"billing","icd34":"outage"}"#)
        let split = AnswerSplitter.split(answer.text, ids: ["iab12", "icd34"])
        #expect(split.answers == ["iab12": "billing", "icd34": "outage"])
    }

    @Test func anotherToolsCallIsNotTakenForTheAnswer() throws {
        let body = """
            {"id":"msg_1","model":"m","stop_reason":"tool_use","content":[{"type":"text","text":"hm"},
            {"type":"tool_use","id":"toolu_1","name":"search","input":{"q":"x"}}],"usage":{"input_tokens":1,"output_tokens":1}}
            """
        let answer = try AnthropicProvider.parseResponse(
            Data(body.utf8), for: Self.batched(keys: ["a"]), redactor: .shapes)
        #expect(answer.text == "hm")
        #expect(answer.finishReason == .other)
    }

    @Test func aRefusalIsA4xxOrA500ThatNamesTheForm() {
        let llamaCppPython =
            "1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
            + "'msg': \"Input should be 'text' or 'json_object'\"}"
        #expect(StructuredAnswer.isRefusal(status: 500, message: llamaCppPython))
        #expect(StructuredAnswer.isRefusal(status: 400, message: "tools: not supported"))
        #expect(StructuredAnswer.isRefusal(status: 422, message: "unprocessable"))
        #expect(!StructuredAnswer.isRefusal(status: 500, message: "internal error"), "a failing server")
        #expect(!StructuredAnswer.isRefusal(status: 429, message: "response_format"))
    }
}
