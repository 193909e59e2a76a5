import Foundation
import Testing

@testable import Offpeak
@testable import OffpeakSimKit

/// A benchmark compares offpeak's batched answers with one-request-per-item answers, so every
/// item of a batched answer must be exactly its answer alone, in JSON any parser reads back.
struct SimBatchAnswerTests {
    let composer = AnswerComposer(summarizer: ExtractiveSummarizer(budgetTokens: 60))

    let texts = [
        "What is the capital of France? Explain briefly.",
        "Summarize this.\n<document>\n# Report\nSales rose. Costs fell.\n</document>",
        "   ",
        "Say \"hi\" to Zoë \\ 日本.\nSecond line.",
    ]

    private func prompt(_ texts: [String]) -> String {
        BatchPrompt.render(texts.enumerated().map { (id: "i\($0.offset)", text: $0.element) })
    }

    /// The object's text parsed back, keys in the order written.
    private func parsed(_ json: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8))
        return try #require(object as? [String: Any])
    }

    @Test func eachItemGetsItsAnswerAlone() throws {
        let json = composer.fullAnswer(to: prompt(texts))
        let object = try parsed(json)
        #expect(object.count == texts.count)
        for (index, text) in texts.enumerated() {
            #expect(object["i\(index)"] as? String == composer.fullAnswer(to: text))
        }
        #expect(object["i1"] as? String == "Sales rose. Costs fell.")
        #expect(object["i2"] as? String == "Answer: (empty prompt)")
    }

    @Test func objectIsCompactAndInTheItemsOrder() {
        let json = composer.fullAnswer(to: prompt(["One.", "Two.", "Three."]))
        #expect(json == #"{"i0":"Answer: One.","i1":"Answer: Two.","i2":"Answer: Three."}"#)
    }

    @Test func escapesQuotesNewlinesControlsAndKeepsUnicode() throws {
        #expect(BatchAnswer.quoted("a\"b\\c") == #""a\"b\\c""#)
        #expect(BatchAnswer.quoted("l1\nl2\r\t") == #""l1\nl2\r\t""#)
        #expect(BatchAnswer.quoted("\u{08}\u{0C}\u{01}\u{1F}") == #""\b\f\u0001\u001f""#)
        #expect(BatchAnswer.quoted("Zoë 日本 🎉 a/b") == "\"Zoë 日本 🎉 a/b\"")
        let nasty = "He said \"no\"\n\\ then\u{07} left. Zoë 🎉"
        let answer = BatchAnswer(entries: [.init(key: "k \"q\"\n", value: .string(nasty), item: 0)])
        let object = try parsed(answer.text)
        #expect(object["k \"q\"\n"] as? String == nasty)
    }

    @Test func documentItemKeepsItsSummaryWhenEscaped() throws {
        let document = "Summarize.\n<document>\nShe wrote \"done\". Then\tleft.\n</document>"
        let object = try parsed(composer.fullAnswer(to: prompt([document, "Plain?"])))
        #expect(object["i0"] as? String == "She wrote \"done\". Then left.")
        #expect(object["i1"] as? String == "Answer: Plain?")
    }

    @Test func maxTokensCutsTheWholeJSONText() {
        let full = composer.fullAnswer(to: prompt(texts))
        let answer = composer.answer(to: prompt(texts), maxTokens: 5)
        #expect(answer.hitMaxTokens)
        #expect(answer.outputTokens == 5)
        #expect(answer.text == String(full.prefix(20)))
        let whole = composer.answer(to: prompt(texts), maxTokens: 4096)
        #expect(whole.text == full)
        #expect(whole.outputTokens == SimTokens.count(full))
    }

    @Test func answerTokensLimitsThePlainAnswer() {
        let sentence = String(repeating: "abcd ", count: 60) + "end."
        let short = AnswerComposer(answerTokens: 5)
        #expect(short.fullAnswer(to: sentence) == "Answer: abcd abcd abcd abcd")
        #expect(SimTokens.count(String(composer.fullAnswer(to: sentence).dropFirst(8))) == 40)
        #expect(AnswerComposer().answerTokens == 40)
        #expect(SimOptions().answerTokens == 40)
        // Batched items use the same limit, so batched and single answers still agree.
        let object = short.fullAnswer(to: prompt([sentence]))
        #expect(object == #"{"i0":"Answer: abcd abcd abcd abcd"}"#)
    }

    @Test func answerTokensFlagReachesTheOptions() throws {
        var options = SimOptions()
        options.answerTokens = 0
        #expect(throws: SimConfigError.self) { try options.validate() }
        options.answerTokens = 12
        #expect(SimState(options: options).composer.answerTokens == 12)
    }
}
