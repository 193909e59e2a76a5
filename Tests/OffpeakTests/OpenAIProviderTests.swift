import Foundation
import Testing

@testable import Offpeak

struct OpenAIProviderTests {
    let request = CompletionRequest(
        model: "gpt-4o-mini", system: "Be brief.", messages: [ChatMessage(role: .user, content: "Hi there")],
        maxTokens: 128, temperature: 0, stop: ["\n\n"])

    func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func parse(_ text: String) throws(ProviderError) -> CompletionResponse {
        try OpenAIProvider.parseResponse(Data(text.utf8), for: request, redactor: .shapes)
    }

    @Test func bodyPutsSystemFirstAndUsesMaxTokens() throws {
        let body = try json(OpenAIProvider.requestBody(for: request))
        let messages = try #require(body["messages"] as? [[String: String]])
        #expect(
            messages == [
                ["role": "system", "content": "Be brief."], ["role": "user", "content": "Hi there"],
            ])
        #expect(body["max_tokens"] as? Int == 128 && body["max_completion_tokens"] == nil)
        #expect(body["temperature"] as? Double == 0)
        #expect(body["stop"] as? [String] == ["\n\n"])
        #expect(body["top_p"] == nil)
    }

    @Test func reasoningModelsUseMaxCompletionTokens() throws {
        for model in ["o3", "o4-mini", "gpt-5-mini", "o1"] {
            var reasoning = request
            reasoning.model = model
            reasoning.system = nil
            reasoning.stop = []
            let body = try json(OpenAIProvider.requestBody(for: reasoning))
            #expect(body["max_completion_tokens"] as? Int == 128 && body["max_tokens"] == nil, "\(model)")
            #expect((body["messages"] as? [Any])?.count == 1 && body["stop"] == nil)
        }
        #expect(!OpenAIProvider.usesCompletionTokenLimit("gpt-4.1"))
    }

    @Test func cachedTokensComeOutOfPromptTokens() throws {
        let answer = try parse(
            """
            {"id": "chatcmpl-1", "model": "gpt-4o-mini-2024-07-18",
             "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 2000, "completion_tokens": 10, "total_tokens": 2010,
                       "prompt_tokens_details": {"cached_tokens": 1536}}}
            """)
        #expect(answer.text == "Hello" && answer.finishReason == .stop)
        #expect(answer.usage == Usage(input: 464, output: 10, cacheRead: 1536, cacheWrite: 0))
        #expect(answer.usage.totalInput == 2000)
        #expect(
            answer.id == "chatcmpl-1" && answer.model == "gpt-4o-mini-2024-07-18" && !answer.usageEstimated)
    }

    @Test func lengthAndFilteredAnswers() throws {
        let cut = try parse(
            #"{"choices": [{"message": {"content": "Hel"}, "finish_reason": "length"}], "usage": {"prompt_tokens": 5, "completion_tokens": 1}}"#
        )
        #expect(cut.finishReason == .length && cut.usage == Usage(input: 5, output: 1))
        let filtered = try parse(
            #"{"choices": [{"message": {"content": null}, "finish_reason": "content_filter"}], "usage": {"prompt_tokens": 5, "completion_tokens": 0}}"#
        )
        #expect(filtered.text == "" && filtered.finishReason == .other)
    }

    @Test func missingUsageIsEstimated() throws {
        let answer = try parse(#"{"choices": [{"message": {"content": "abcd"}, "finish_reason": "stop"}]}"#)
        #expect(answer.usageEstimated)
        #expect(answer.usage == Usage(input: TokenEstimator.inputTokens(request), output: 1))
        #expect(answer.model == "gpt-4o-mini")
    }

    @Test func unreadableAnswersNameWhatIsWrong() {
        #expect(throws: ProviderError.badResponse("answer has no `choices`")) {
            try parse(#"{"choices": []}"#)
        }
        #expect(throws: ProviderError.badResponse("answer lacks `choices`")) { try parse(#"{"id": "x"}"#) }
        #expect(throws: ProviderError.badResponse("answer has the wrong type at `choices[0].finish_reason`"))
        {
            try parse(#"{"choices": [{"message": {"content": "x"}, "finish_reason": 3}]}"#)
        }
    }

    @Test func errorBodiesGiveMessageAndCode() {
        let quota = ProviderTransport.errorDetails(
            in: Data(
                #"{"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}"#
                    .utf8), redactor: .shapes)
        #expect(quota.message == "You exceeded your current quota" && quota.code == "insufficient_quota")
        let plain = ProviderTransport.errorDetails(
            in: Data(#"{"error": "model not loaded"}"#.utf8), redactor: .shapes)
        #expect(plain.message == "model not loaded" && plain.code == nil)
        #expect(
            ProviderTransport.errorDetails(in: Data("Internal Server Error".utf8), redactor: .shapes).message
                == "Internal Server Error")
    }
}
