import Testing

@testable import Offpeak
@testable import OffpeakSimKit

/// The sim must find every item of offpeak's batched prompt and recover each item's text byte
/// for byte, or its answer would differ from the answer the item gets when sent alone.
struct SimBatchItemTests {
    /// Renders with offpeak's own `BatchPrompt`, so a change to that format breaks these tests.
    private func prompt(_ items: [(id: String, text: String)]) -> String {
        BatchPrompt.render(items)
    }

    @Test func findsEveryItemOfOffpeaksPromptInOrder() {
        let text = prompt([
            (id: "i1a2b3c", text: "What is the capital of France?"),
            (id: "i4d5e6f", text: "Summarize.\n<document>\nSales rose.\n</document>"),
            (id: "i778899", text: "Name a prime."),
        ])
        #expect(
            BatchItem.items(in: text) == [
                BatchItem(id: "i1a2b3c", text: "What is the capital of France?"),
                BatchItem(id: "i4d5e6f", text: "Summarize.\n<document>\nSales rose.\n</document>"),
                BatchItem(id: "i778899", text: "Name a prime."),
            ])
    }

    @Test func textWithoutItemsIsNotBatched() {
        #expect(BatchItem.items(in: "What is the capital of France?").isEmpty)
        #expect(BatchItem.items(in: "").isEmpty)
        // The header names the ids in quotes, but only `<item id="...">` blocks are items.
        let header = #"Its keys are the item ids exactly as given ("i1", "i2")."#
        #expect(BatchItem.items(in: header).isEmpty)
    }

    @Test(arguments: [
        "plain", "", "with space", "a<b>c", "zoë-日本", "it's", "line\nbreak", "-1", "i1-2", "x/y\\z",
    ])
    func idsMayHoldAnyCharacterButAQuote(id: String) {
        let items = BatchItem.items(in: prompt([(id: id, text: "Hi.")]))
        #expect(items == [BatchItem(id: id, text: "Hi.")])
    }

    @Test func blockWithAQuoteInItsIdIsNotAnItem() {
        let text = "<item id=\"a\"b\">\nHi.\n</item>\n<item id=\"ok\">\nYes.\n</item>"
        #expect(BatchItem.items(in: text) == [BatchItem(id: "ok", text: "Yes.")])
    }

    @Test func unterminatedBlockIsNotAnItem() {
        #expect(BatchItem.items(in: "<item id=\"a\">\nHi.\n").isEmpty)
        #expect(BatchItem.items(in: "<item id=\"a\nHi.").isEmpty)
        let text = "<item id=\"a\">\nHi.\n</item>\n<item id=\"b\">\nNo end."
        #expect(BatchItem.items(in: text) == [BatchItem(id: "a", text: "Hi.")])
    }

    @Test(arguments: [
        "", "\n", "\n\nTwo newlines on each side.\n\n", "  spaces kept  ", "ends in CR\r", "\r\nCRLF\r\n",
        "Zoë said \"hi\".\tTab.", "multi\nline\ntext",
    ])
    func itemTextComesBackExactly(text: String) {
        let items = BatchItem.items(in: prompt([(id: "i1", text: text), (id: "i2", text: "Next.")]))
        #expect(items.map(\.text) == [text, "Next."])
    }

    @Test func onlyOneNewlineIsTrimmedOnEachSide() {
        let text = "<item id=\"a\">\n\nBody\n\n</item><item id=\"b\">Tight</item>"
        #expect(
            BatchItem.items(in: text) == [
                BatchItem(id: "a", text: "\nBody\n"),
                BatchItem(id: "b", text: "Tight"),
            ])
    }

    @Test func itemTextEndsAtTheFirstClosingTag() {
        let text = "<item id=\"a\">\n<item id=\"inner\">x\n</item>\nafter</item>"
        let items = BatchItem.items(in: text)
        #expect(items == [BatchItem(id: "a", text: "<item id=\"inner\">x")])
        // So an item's text never holds a whole block: alone, it is not batched either.
        #expect(BatchItem.items(in: items[0].text).isEmpty)
    }

    @Test func lastUserMessageDecidesBatchMode() {
        let conversation = SimConversation(messages: [
            .init(role: "user", texts: [prompt([(id: "old", text: "Earlier.")])]),
            .init(role: "assistant", texts: [#"{"old":"Answer: Earlier."}"#]),
            .init(role: "user", texts: ["Plain question?"]),
        ])
        #expect(BatchItem.items(in: conversation.lastUserText).isEmpty)
    }

    /// The text the items share is written once, in a frame; each item comes back whole.
    @Test func framedItemsComeBackWhole() {
        let texts = [
            "Summarize the following document.\n\n<document>\nSales rose.\nCosts fell.\n</document>",
            "Summarize the following document.\n\n<document>\n\n</document>",
            "Summarize the following document.\n\n<document>\nZoë \"quoted\"\r\n</document>",
        ]
        let text = prompt(texts.enumerated().map { (id: "i\($0.offset + 1)", text: $0.element) })
        #expect(
            text.contains(
                "<frame>\nSummarize the following document.\n\n<document>\n{{item}}\n</document>\n</frame>"))
        #expect(!text.contains("<item id=\"i1\">\nSummarize"))
        #expect(BatchItem.items(in: text).map(\.text) == texts)
    }

    /// Random bodies in a shared template, and texts sharing only part of a line: every item's
    /// text comes back byte for byte.
    @Test func framedRoundTripOverManyTexts() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "b c", "\n", "\r\n", "é", "日本", "{", "}", "<", ">", "\"", " ", "{{item", "</doc"]
        for _ in 0..<200 {
            let head =
                ["Header line one.\nHeader two\n", "Same start ", "", "Classify this ticket:\n"]
                .randomElement(using: &generator) ?? ""
            let tail =
                ["\nEnd of the shared text, long enough.", "", "\n</document>"]
                .randomElement(using: &generator) ?? ""
            let count = Int.random(in: 1...6, using: &generator)
            let texts = (0..<count).map { _ in
                head
                    + (0..<Int.random(in: 0...8, using: &generator)).map { _ in pieces.randomElement() ?? "" }
                    .joined()
                    + tail
            }
            let items = texts.enumerated().map { (id: "i\($0.offset + 1)", text: $0.element) }
            #expect(BatchItem.items(in: prompt(items)).map(\.text) == texts)
        }
    }
}
