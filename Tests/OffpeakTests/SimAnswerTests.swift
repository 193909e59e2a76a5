import Testing

@testable import OffpeakSimKit

struct SimAnswerTests {
    let composer = AnswerComposer(summarizer: ExtractiveSummarizer(budgetTokens: 60))

    @Test func plainPromptIsAnsweredWithItsFirstSentence() {
        let answer = composer.answer(to: "What is the capital of France? Explain briefly.", maxTokens: 100)
        #expect(answer.text == "Answer: What is the capital of France?")
        #expect(answer.outputTokens == SimTokens.count(answer.text))
        #expect(!answer.hitMaxTokens)
    }

    @Test func plainAnswerRepeatsAtMostFortyTokens() {
        let sentence = String(repeating: "abcd ", count: 60)
        let text = composer.fullAnswer(to: sentence)
        #expect(text.hasPrefix("Answer: abcd"))
        #expect(SimTokens.count(String(text.dropFirst("Answer: ".count))) <= 40)
        #expect(composer.fullAnswer(to: "   ") == "Answer: (empty prompt)")
    }

    @Test func documentIsSummarized() {
        let prompt = "Summarize this.\n<document>\n# Report\nSales rose. Costs fell.\n</document>"
        #expect(composer.fullAnswer(to: prompt) == "Sales rose. Costs fell.")
    }

    @Test func longAnswerIsCutToMaxTokens() {
        let prompt = "<document>The quick brown fox jumps over the lazy dog.</document>"
        let answer = composer.answer(to: prompt, maxTokens: 3)
        #expect(answer.text == "The quick br")
        #expect(answer.outputTokens == 3)
        #expect(answer.hitMaxTokens)
    }

    @Test func answerThatFitsExactlyIsNotCut() {
        let full = composer.fullAnswer(to: "Hi.")
        let answer = composer.answer(to: "Hi.", maxTokens: SimTokens.count(full))
        #expect(answer.text == full)
        #expect(!answer.hitMaxTokens)
    }
}
