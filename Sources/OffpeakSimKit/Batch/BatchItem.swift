/// One item of a batched prompt: its id and its text, as offpeak's `BatchPrompt` wrote them.
///
/// offpeak packs several small requests into one prompt, each inside an
/// `<item id="...">` … `</item>` block. The sim answers such a prompt item by item, so it must
/// recover each item's text exactly as the item would have been sent alone.
public struct BatchItem: Sendable, Equatable {
    public var id: String
    public var text: String

    public init(id: String, text: String) {
        self.id = id
        self.text = text
    }

    private static let open = Array(#"<item id=""#.utf8)
    private static let idEnd = Array(#"">"#.utf8)
    private static let close = Array("</item>".utf8)
    private static let newline = UInt8(ascii: "\n")

    /// Every complete item block of `text`, in order; empty when the text is not batched.
    ///
    /// An id is whatever lies between `id="` and the next `">` and holds no `"`. An item's text
    /// runs to the first `</item>` after its opening tag, less the one newline `BatchPrompt`
    /// puts after the opening tag and the one before the closing tag. A block without its
    /// closing tag, or with a `"` in its id, is not an item.
    ///
    /// The search runs over UTF-8 bytes, not characters, so a `\r` that ends an item's text is
    /// kept (as characters, `\r\n` would be one grapheme and hide the newline).
    public static func items(in text: String) -> [BatchItem] {
        let bytes = Array(text.utf8)
        var items: [BatchItem] = []
        var cursor = 0
        while let openStart = find(open, in: bytes, from: cursor) {
            let idStart = openStart + open.count
            guard let idStop = find(idEnd, in: bytes, from: idStart) else { break }
            guard !bytes[idStart..<idStop].contains(UInt8(ascii: "\"")) else {
                cursor = idStart
                continue
            }
            var bodyStart = idStop + idEnd.count
            guard let closeStart = find(close, in: bytes, from: bodyStart) else { break }
            var bodyEnd = closeStart
            if bodyStart < bodyEnd, bytes[bodyStart] == newline { bodyStart += 1 }
            if bodyStart < bodyEnd, bytes[bodyEnd - 1] == newline { bodyEnd -= 1 }
            items.append(
                BatchItem(
                    id: String(decoding: bytes[idStart..<idStop], as: UTF8.self),
                    text: String(decoding: bytes[bodyStart..<bodyEnd], as: UTF8.self)))
            cursor = closeStart + close.count
        }
        return items
    }

    /// The first index at or after `start` where `pattern` begins in `bytes`.
    private static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard let first = pattern.first, bytes.count - start >= pattern.count else { return nil }
        var index = start
        let last = bytes.count - pattern.count
        while index <= last {
            if bytes[index] == first, bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                return index
            }
            index += 1
        }
        return nil
    }
}
