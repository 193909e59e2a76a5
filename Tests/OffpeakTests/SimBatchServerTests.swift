import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The built `offpeak-sim` answers batched prompts, damages them on request, counts them in
/// `/sim/stats` and tells a benchmark the expected answers, all over HTTP as clients see it.
@Suite(.ownThreads) struct SimBatchServerTests {
    let texts = [
        "What is the capital of France? Explain briefly.",
        "Summarize.\n<document>\nSales rose. Costs fell.\n</document>",
        "Say \"hi\" to Zoë.\nSecond line.",
    ]

    private var batchedPrompt: String {
        BatchPrompt.render(texts.enumerated().map { (id: "i\($0.offset)", text: $0.element) })
    }

    private func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// POSTs a JSON body and decodes the JSON answer.
    private func post(_ sim: SimProcess, _ path: String, _ body: [String: Any]) throws -> [String: Any] {
        try object(try sim.request("POST", path, body: try JSONSerialization.data(withJSONObject: body)))
    }

    /// The text of an Anthropic answer to `prompt`, and its whole body.
    private func message(_ sim: SimProcess, _ prompt: String, maxTokens: Int = 1000) throws -> (
        text: String, body: [String: Any]
    ) {
        let body = try post(
            sim, "/v1/messages",
            ["model": "m", "max_tokens": maxTokens, "messages": [["role": "user", "content": prompt]]])
        let content = try #require(body["content"] as? [[String: Any]])
        return (try #require(content.first?["text"] as? String), body)
    }

    private func expected(_ sim: SimProcess, _ texts: [String]) throws -> [String] {
        try #require(try post(sim, "/sim/expected", ["texts": texts])["answers"] as? [String])
    }

    @Test func batchedAnswerHoldsEachItemsAnswerAlone() throws {
        let sim = try SimProcess()
        let alone = try texts.map { try message(sim, $0).text }
        #expect(try expected(sim, texts) == alone)
        let (text, body) = try message(sim, batchedPrompt)
        let answers = try object(Data(text.utf8))
        #expect(answers.count == texts.count)
        for (index, answer) in alone.enumerated() {
            #expect(answers["i\(index)"] as? String == answer)
        }
        let usage = try #require(body["usage"] as? [String: Any])
        #expect(usage["output_tokens"] as? Int == (text.utf8.count + 3) / 4)
        let stats = try sim.stats()
        #expect(stats["batched_calls"] as? Int == 1)
        #expect(stats["batched_items"] as? Int == 3)
        #expect((stats["damage"] as? [String: Int])?.values.reduce(0, +) == 0)
    }

    @Test func maxTokensCutsTheBatchedAnswer() throws {
        let sim = try SimProcess()
        let body = try post(
            sim, "/v1/chat/completions",
            ["model": "m", "max_tokens": 4, "messages": [["role": "user", "content": batchedPrompt]]])
        let choice = try #require((body["choices"] as? [[String: Any]])?.first)
        #expect(choice["finish_reason"] as? String == "length")
        #expect(
            (choice["message"] as? [String: Any])?["content"] as? String == #"{"i0":"Answer: W"#, "16 bytes")
    }

    @Test func damageIsCountedAndResetClearsIt() throws {
        let sim = try SimProcess(arguments: ["--damage-rate", "1", "--damage", "drop", "--seed", "3"])
        #expect(try message(sim, batchedPrompt).text == "{}")
        #expect(try message(sim, "Not batched.").text == "Answer: Not batched.")
        var stats = try sim.stats()
        #expect(stats["batched_calls"] as? Int == 1)
        #expect((stats["damage"] as? [String: Int])?["drop"] == 3)
        #expect(try expected(sim, texts).count == 3, "expected answers are never damaged")
        _ = try sim.request("POST", "/sim/reset")
        stats = try sim.stats()
        #expect(stats["batched_calls"] as? Int == 0)
        #expect(stats["batched_items"] as? Int == 0)
        #expect((stats["damage"] as? [String: Int])?["drop"] == 0)
    }

    @Test func seededDamageRepeatsAcrossServers() throws {
        let arguments = ["--damage-rate", "0.5", "--seed", "1"]
        let first = try SimProcess(arguments: arguments)
        let second = try SimProcess(arguments: arguments)
        let run = { (sim: SimProcess) in try (0..<4).map { _ in try message(sim, batchedPrompt).text } }
        #expect(try run(first) == run(second))
    }

    @Test func answerTokensFlagShortensPlainAnswers() throws {
        let sim = try SimProcess(arguments: ["--answer-tokens", "3"])
        #expect(try expected(sim, ["What is the capital of France?"]) == ["Answer: What is the"])
        #expect(try message(sim, "What is the capital of France?").text == "Answer: What is the")
    }

    @Test func expectedRejectsABadBody() throws {
        let sim = try SimProcess()
        let body = try object(try sim.request("POST", "/sim/expected", body: Data(#"{"texts": 3}"#.utf8)))
        let error = try #require(body["error"] as? [String: Any])
        #expect(error["message"] as? String == "texts: expected an array")
    }
}
