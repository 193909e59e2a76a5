/// The text of a batched prompt: the answer's format, the frame the items share, the items, and
/// the one JSON object the answer must be.
///
/// offpeak-sim reads the same shape (`<frame>` and `<item id="...">` blocks); real models follow it
/// well when the ids are short and the format is stated once, before the items. Every byte here is
/// paid once per prompt or once per item, on every batched call: the ids are not listed (each item
/// names its own), and what all items share is written once (`BatchFrame`).
enum BatchPrompt {
    /// The user message for `items` (id, text), in order.
    static func render(_ items: [(id: String, text: String)]) -> String {
        var text =
            "Answer each of the \(items.count) items below on its own, following the instructions above. "
            + "Reply with one JSON object and nothing else. Its keys are the item ids exactly as given; "
            + "each value is that item's answer as a JSON string.\n"
        let frame = BatchFrame(texts: items.map(\.text))
        if let frame {
            text +=
                "Each item's whole text is this frame with the item's text in place of "
                + "\(BatchFrame.placeholder):\n<frame>\n\(frame.text)\n</frame>\n"
        }
        for item in items {
            text += "\n<item id=\"\(item.id)\">\n\(frame?.body(of: item.text) ?? item.text)\n</item>\n"
        }
        return text
    }

    /// Short ids for a batch's requests: `i` and the item's place in the prompt (`i1`, `i2`, …).
    /// They are written twice per item, in the prompt and as the answer's keys (output tokens, the
    /// dear ones), so they are as short as a clear id can be. A call planned again from the same
    /// requests in the same order (a provider batch's results) gets the same ids.
    static func itemIDs(count: Int) -> [String] {
        (0..<count).map { "i\($0 + 1)" }
    }
}
