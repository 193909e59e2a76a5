/// One item of a batched prompt: its id and its text, as offpeak's `BatchPrompt` wrote them.
///
/// offpeak packs several small requests into one prompt, each inside an
/// `<item id="...">` … `</item>` block. The text all items share may be written once, before the
/// items, as a `<frame>` block holding `{{item}}` where each item's own text goes. The sim answers
/// such a prompt item by item, so it must recover each item's text exactly as the item would have
/// been sent alone: the frame with the item's block in place of `{{item}}`.
public struct BatchItem: Sendable, Equatable {
    public var id: String
    public var text: String

    public init(id: String, text: String) {
        self.id = id
        self.text = text
    }

    private static let open = Array(#"<item id=""#.utf8)
    private static let frameOpen = Array("<frame>\n".utf8)
    private static let frameClose = Array("\n</frame>".utf8)
    private static let placeholder = Array("{{item}}".utf8)
    private static let idEnd = Array(#"">"#.utf8)
    private static let close = Array("</item>".utf8)
    private static let newline = UInt8(ascii: "\n")

    /// Every complete item block of `text`, in order; empty when the text is not batched.
    ///
    /// An id is whatever lies between `id="` and the next `">` and holds no `"`. An item's text
    /// runs to the first `</item>` after its opening tag, less the one newline `BatchPrompt`
    /// puts after the opening tag and the one before the closing tag. A block without its
    /// closing tag, or with a `"` in its id, is not an item. A `<frame>` block counts only
    /// before the first item, and only with a `{{item}}` in it.
    ///
    /// The search runs over UTF-8 bytes, not characters, so a `\r` that ends an item's text is
    /// kept (as characters, `\r\n` would be one grapheme and hide the newline).
    public static func items(in text: String) -> [BatchItem] {
        let bytes = Array(text.utf8)
        var items: [BatchItem] = []
        let frame = self.frame(in: bytes)
        var cursor = frame?.end ?? 0
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
            var body = Array(frame?.prefix ?? [])
            body += bytes[bodyStart..<bodyEnd]
            body += frame?.suffix ?? []
            items.append(
                BatchItem(
                    id: String(decoding: bytes[idStart..<idStop], as: UTF8.self),
                    text: String(decoding: body, as: UTF8.self)))
            cursor = closeStart + close.count
        }
        return items
    }

    /// The frame before the first item, if the prompt has one: the bytes before and after its
    /// first `{{item}}`, and where the frame block ends.
    private static func frame(in bytes: [UInt8]) -> (
        prefix: ArraySlice<UInt8>, suffix: ArraySlice<UInt8>, end: Int
    )? {
        let firstItem = find(open, in: bytes, from: 0) ?? bytes.count
        guard let start = find(frameOpen, in: bytes, from: 0), start < firstItem else { return nil }
        let contentStart = start + frameOpen.count
        guard let close = find(frameClose, in: bytes, from: contentStart), close < firstItem,
            let slot = find(placeholder, in: Array(bytes[contentStart..<close]), from: 0)
        else { return nil }
        return (
            bytes[contentStart..<(contentStart + slot)],
            bytes[(contentStart + slot + placeholder.count)..<close],
            close + frameClose.count
        )
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
