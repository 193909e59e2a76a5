import Testing

@testable import Offpeak

/// The frame holds whole lines all items share, and only when that saves something.
struct BatchFrameTests {
    @Test func summarizeTemplateIsTheFrame() throws {
        let frame = try #require(
            BatchFrame(texts: [
                "Summarize the following document.\n\n<document>\nThe cat sat.\nOn the mat.\n</document>",
                "Summarize the following document.\n\n<document>\nThe dog ran.\n</document>",
            ]))
        #expect(frame.prefix == "Summarize the following document.\n\n<document>\n")
        #expect(frame.suffix == "\n</document>")
        #expect(
            frame.body(of: "Summarize the following document.\n\n<document>\nThe dog ran.\n</document>")
                == "The dog ran.")
    }

    @Test func sharedTextIsCutToWholeLines() throws {
        // "The " is shared too, but it is part of each item's own first line.
        let frame = try #require(
            BatchFrame(texts: [
                "Read the ticket below and classify it.\nThe printer is jammed.",
                "Read the ticket below and classify it.\nThe screen is dark.",
            ]))
        #expect(frame.prefix == "Read the ticket below and classify it.\n")
        #expect(frame.suffix == "")
    }

    @Test func noFrameWhenItSavesLittleOrCouldConfuse() {
        #expect(BatchFrame(texts: ["Same line, different end 1", "Same line, different end 2"]) == nil)
        #expect(BatchFrame(texts: ["Short.\nA", "Short.\nB"]) == nil)
        #expect(BatchFrame(texts: ["Only one item has nothing to share with.\nA"]) == nil)
        #expect(BatchFrame(texts: []) == nil)
        // The prompt's own markers may not be hoisted: the items would be ambiguous.
        let marked = "A shared header that is long enough <item id=\"x\">\n"
        #expect(BatchFrame(texts: [marked + "one", marked + "two"]) == nil)
        let placeholder = "A shared header that is long enough {{item}}\n"
        #expect(BatchFrame(texts: [placeholder + "one", placeholder + "two"]) == nil)
    }

    @Test func itemsThatAreAllTheSameKeepTheirText() throws {
        // Prefix and suffix never overlap: the shortest text bounds both together.
        let text = "The same long line, sent twice by two agents.\nAnd its second line."
        let frame = try #require(BatchFrame(texts: [text, text]))
        #expect(frame.prefix + frame.body(of: text) + frame.suffix == text)
        #expect(frame.prefix.utf8.count + frame.suffix.utf8.count <= text.utf8.count)
    }

    @Test func promptListsNoIdsInItsHeaderAndNumbersItsItems() {
        let ids = BatchPrompt.itemIDs(count: 3)
        #expect(ids == ["i1", "i2", "i3"])
        #expect(BatchPrompt.itemIDs(count: 0).isEmpty)
        let prompt = BatchPrompt.render(Array(zip(ids, ["a", "b", "c"])))
        #expect(
            prompt == """
                Answer each of the 3 items below on its own, following the instructions above. Reply with \
                one JSON object and nothing else. Its keys are the item ids exactly as given; each value is \
                that item's answer as a JSON string.

                <item id="i1">
                a
                </item>

                <item id="i2">
                b
                </item>

                <item id="i3">
                c
                </item>

                """)
    }
}
