import Foundation
import Testing

@testable import OffpeakSimKit

/// offpeak-sim's structured-output forms and its weak model (`--weak-model`).
struct SimStructuredTests {
    let answer = BatchAnswer(
        items: ["a", "b"].map { BatchItem(id: $0, text: "") }, answers: ["Answer: A.", "Answer: B."])

    @Test func aWeakModelWritesProseKeysOfItsOwnOrHalfAnObject() {
        #expect(
            WeakModel.text(of: answer, failing: .prose)
                == "Here are the answers to each item:\n\n1. Answer: A.\n2. Answer: B.")
        #expect(
            WeakModel.text(of: answer, failing: .wrongKeys) == #"{"item1":"Answer: A.","item2":"Answer: B."}"#
        )
        #expect(WeakModel.text(of: answer, failing: .truncated) == #"{"a":"Answer: A."#)
    }

    @Test func aWeakModelDrawsRepeatablyUnderASeed() {
        let first = WeakModel(seed: 5)
        let drawn = (0..<12).map { _ in first.spoil(answer).failure }
        first.reset()
        #expect((0..<12).map { _ in first.spoil(answer).failure } == drawn)
        #expect(Set(drawn).count == 3, "every kind of failure comes up")
    }

    static func openAI(_ body: String) throws -> ChatCompletionRequest {
        try JSONBody.decode(ChatCompletionRequest.self, from: Data(body.utf8))
    }

    @Test func openAIsResponseFormatsAreReadAsTheAPIReadsThem() throws {
        let messages = #""model":"m","messages":[{"role":"user","content":"x"}]"#
        let schema = try Self.openAI(
            #"{\#(messages),"response_format":{"type":"json_schema","json_schema":{"name":"n","strict":true,"#
                + #""schema":{"type":"object","required":["a","b"],"properties":{}}}}}"#)
        #expect(try schema.validated().form == .schema(required: ["a", "b"]))
        #expect(try Self.openAI(#"{\#(messages)}"#).validated().form == .text)
        let object = try Self.openAI(#"{\#(messages),"response_format":{"type":"json_object"}}"#)
        #expect(try object.validated().form == .jsonObject)
        #expect(!AnswerForm.jsonObject.holdsShape, "any object: a weak model's own keys pass")
        let wrong = try Self.openAI(#"{\#(messages),"response_format":{"type":"xml"}}"#)
        #expect(throws: SimAPIError.self) { try wrong.validated() }
    }

    /// llama-cpp-python's form: `json_object` with a schema, from which it builds a grammar.
    @Test func aJSONObjectWithASchemaHoldsTheShapeAndOnlyJSONSchemaIsRefusedWhenAsked() throws {
        let messages = #""model":"m","messages":[{"role":"user","content":"x"}]"#
        let call = try Self.openAI(
            #"{\#(messages),"response_format":{"type":"json_object","schema":{"type":"object","#
                + #""required":["a","b"],"properties":{}}}}"#)
        let form = try call.validated().form
        #expect(form == .objectSchema(required: ["a", "b"]) && form.holdsShape)
        var options = SimOptions()
        options.jsonSchema = false
        options.structuredRefusalStatus = 500
        let state = SimState(options: options)
        func refusal(_ form: AnswerForm) -> SimAPIError? {
            state.refusal(
                of: ParsedCall(
                    model: "m", conversation: SimConversation(messages: []), maxTokens: 10, form: form))
        }
        #expect(refusal(.schema(required: ["a"])) != nil)
        #expect(refusal(form) == nil && refusal(.jsonObject) == nil && refusal(.tool(name: "t")) == nil)
    }

    @Test func aForcedAnthropicToolIsAShapedAnswerBilledWithTheToolPrompt() throws {
        let body = """
            {"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"}],
            "tools":[{"name":"record_answers","input_schema":{"type":"object"}}],
            "tool_choice":{"type":"tool","name":"record_answers"}}
            """
        let request = try JSONBody.decode(AnthropicRequest.self, from: Data(body.utf8))
        let (conversation, _, form) = try request.validated()
        #expect(form == .tool(name: "record_answers"))
        #expect(conversation.toolTokens == SimTokens.count(conversation.tools) + 313)
        #expect(conversation.inputTokens == conversation.toolTokens + 1)
        let unknown = body.replacingOccurrences(of: #""name":"record_answers"}"#, with: #""name":"other"}"#)
        let refused = try JSONBody.decode(AnthropicRequest.self, from: Data(unknown.utf8))
        #expect(throws: SimAPIError.self) { try refused.validated() }
    }

    @Test func aToolAnswerCarriesTheObjectAsTheToolsInput() throws {
        let answer = SimAnswer(text: #"{"a":"Answer: A."}"#, outputTokens: 5, hitMaxTokens: false)
        let response = AnthropicResponse(
            id: "msg_1", model: "m", answer: answer, billing: InputBilling(uncached: 3),
            form: .tool(name: "record_answers"))
        let text = String(buffer: JSONBody.encode(response))
        #expect(text.contains(#""content":[{"id":"toolu_sim_"#))
        #expect(text.contains(#""input":{"a":"Answer: A."},"name":"record_answers","type":"tool_use"}]"#))
        #expect(text.contains(#""stop_reason":"tool_use""#))
    }
}
