import Testing

@testable import OffpeakSimKit

struct SimSummarizerTests {
    @Test func splitsSentencesAtTerminatorsAndLines() {
        let text = "One.  Two!\tThree? Four\n\n  five. 3.14 stays.\r\nlast"
        #expect(
            ExtractiveSummarizer.sentences(in: text, skippingHeadings: false) == [
                "One.", "Two!", "Three?", "Four", "five.", "3.14 stays.", "last",
            ])
    }

    @Test func headingsAreSkippedOrStripped() {
        let text = "# Title\n## Part one\nBody text here."
        #expect(ExtractiveSummarizer.sentences(in: text, skippingHeadings: true) == ["Body text here."])
        #expect(
            ExtractiveSummarizer.sentences(in: text, skippingHeadings: false) == [
                "Title", "Part one", "Body text here.",
            ])
    }

    @Test func summaryKeepsLeadingSentencesWithinBudget() {
        let summarizer = ExtractiveSummarizer(budgetTokens: 10)
        // "Alpha beta gamma." is 17 bytes (5 tokens); with the next sentence 35 bytes (9 tokens).
        let document = "# Notes\n\nAlpha beta gamma. Delta   epsilon zeta.\nEta theta iota kappa."
        #expect(summarizer.summary(of: document) == "Alpha beta gamma. Delta epsilon zeta.")
    }

    @Test func summaryKeepsAtLeastOneSentence() {
        let long = String(repeating: "word ", count: 100) + "end."
        let summary = ExtractiveSummarizer(budgetTokens: 5).summary(of: long + " Next one.")
        #expect(summary == long.split(separator: " ").joined(separator: " "))
    }

    @Test func summaryFallsBackToHeadingsAndEmptyDocument() {
        let summarizer = ExtractiveSummarizer()
        #expect(summarizer.summary(of: "# Only a title") == "Only a title")
        #expect(summarizer.summary(of: " \n\n ") == "The document is empty.")
    }

    @Test func summaryIsDeterministic() {
        let summarizer = ExtractiveSummarizer(budgetTokens: 60)
        let document = "Swift is a language. It is fast! Is it safe? Yes, it is.\nMore text follows here."
        #expect(summarizer.summary(of: document) == summarizer.summary(of: document))
    }

    @Test func findsDocumentBetweenTags() {
        #expect(ExtractiveSummarizer.document(in: "Summarize: <document>A. B.</document> please") == "A. B.")
        #expect(ExtractiveSummarizer.document(in: "<document>never closed") == nil)
        #expect(ExtractiveSummarizer.document(in: "no tags") == nil)
    }
}
