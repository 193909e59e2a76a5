/// The text of a batched prompt: numbered items, and the one JSON object the answer must be.
///
/// offpeak-sim reads the same shape (`<item id="...">` blocks); real models follow it well when
/// the ids are short and the format is stated once, before the items.
enum BatchPrompt {
    /// The user message for `items` (id, text), in order.
    static func render(_ items: [(id: String, text: String)]) -> String {
        let ids = items.map { "\"\($0.id)\"" }.joined(separator: ", ")
        var text =
            "Answer each of the \(items.count) items below on its own, following the instructions above. "
            + "Reply with one JSON object and nothing else. Its keys are the item ids exactly as given "
            + "(\(ids)); each value is that item's answer as a JSON string.\n"
        for item in items {
            text += "\n<item id=\"\(item.id)\">\n\(item.text)\n</item>\n"
        }
        return text
    }

    /// Short ids for a batch's requests: `i` and the last six characters of the request id, made
    /// unique within the batch. The same request keeps its id in whatever batch it lands.
    static func itemIDs(for requestIDs: [String]) -> [String] {
        var used: Set<String> = []
        return requestIDs.enumerated().map { index, requestID in
            var id = "i" + String(requestID.suffix(6))
            if used.contains(id) { id += "-\(index + 1)" }
            used.insert(id)
            return id
        }
    }
}
