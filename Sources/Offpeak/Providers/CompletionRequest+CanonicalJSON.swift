/// A request's canonical JSON, written by hand: its stored payload and what its cache key hashes.
///
/// `offpeak submit` encodes each line's request twice (the payload, then the key) and a run every
/// planned item's, so `JSONEncoder` was a quarter of submit's time. The text is the same, byte for
/// byte, as `CanonicalJSON.text(request)` (its synthesized `Codable`: members in sorted key order,
/// absent optionals left out); `CanonicalJSONWriterTests` holds the two together.
extension CompletionRequest {
    /// The canonical JSON; nil only when a number is not finite (which `JSONEncoder` refuses too).
    var canonicalJSON: [UInt8]? { canonicalJSON(cacheSystemPrompt: cacheSystemPrompt) }

    /// The canonical JSON of this request with `cacheSystemPrompt` in place of its own (a cache key
    /// is that of the request without the marker), without copying the request to change it.
    func canonicalJSON(cacheSystemPrompt: Bool) -> [UInt8]? {
        written(cacheSystemPrompt: cacheSystemPrompt, leavingLastMessageOut: false)?.bytes
    }

    /// The canonical JSON with the last message's text left out (an empty string), and the offset
    /// between that string's quotes where its escaped text goes: what a `RequestTemplate` fills.
    /// Nil as for `canonicalJSON`, or when there is no message.
    var canonicalJSONAroundLastMessage: (bytes: [UInt8], hole: Int)? {
        guard !messages.isEmpty,
            let written = written(cacheSystemPrompt: cacheSystemPrompt, leavingLastMessageOut: true),
            let hole = written.hole
        else { return nil }
        return (written.bytes, hole)
    }

    private func written(cacheSystemPrompt: Bool, leavingLastMessageOut: Bool) -> (
        bytes: [UInt8], hole: Int?
    )? {
        var hole: Int?
        var writer = CanonicalJSONWriter(
            capacity: 256 + (system?.utf8.count ?? 0) + messages.reduce(0) { $0 + $1.content.utf8.count })
        writer.beginObject()
        if let answerForm {
            writer.key("answerForm")
            writer.string(answerForm.rawValue)
        }
        if let answerKeys {
            writer.key("answerKeys")
            writer.strings(answerKeys)
        }
        writer.key("cacheSystemPrompt")
        writer.bool(cacheSystemPrompt)
        writer.key("maxTokens")
        writer.int(maxTokens)
        writer.key("messages")
        writer.beginArray()
        for (index, message) in messages.enumerated() {
            writer.beginObject()
            writer.key("content")
            if leavingLastMessageOut && index == messages.count - 1 {
                writer.string("")
                hole = writer.count - 1
            } else {
                writer.string(message.content)
            }
            writer.key("role")
            writer.string(message.role.rawValue)
            writer.endObject()
        }
        writer.endArray()
        writer.key("model")
        writer.string(model)
        if let searchUses {
            writer.key("searchUses")
            writer.int(searchUses)
        }
        writer.key("stop")
        writer.strings(stop)
        if let system {
            writer.key("system")
            writer.string(system)
        }
        if let temperature {
            writer.key("temperature")
            guard writer.double(temperature) else { return nil }
        }
        if let topP {
            writer.key("topP")
            guard writer.double(topP) else { return nil }
        }
        writer.endObject()
        return (writer.bytes, hole)
    }

    /// The canonical JSON as text, as `CanonicalJSON.text` gives it (empty when it cannot be
    /// encoded).
    var canonicalText: String {
        canonicalJSON.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}

extension CompletionRequest {
    private static let systemKey = Array(#","system":""#.utf8)
    private static let membersAfterSystem = [Array(#","temperature":"#.utf8), Array(#","topP":"#.utf8)]

    /// Where the system prompt's text lies in `json`, a request's canonical JSON: the range between
    /// its quotes (escaped, as written). Nil when the request has none, or `json` is not canonical.
    ///
    /// Found from the end, without parsing: in the canonical order only numbers (`temperature`,
    /// `topP`) follow `system`, so the last string value is the system prompt's; and as every quote
    /// inside an escaped string follows a backslash, `,"system":"` never occurs inside a value, so
    /// the nearest one before that string is its key. A caller that knows the prompt's length from
    /// an earlier request passes it as `length`: the key is then looked for at one place only,
    /// and a request of the same job costs a comparison of 11 bytes, not a scan of the prompt.
    static func systemRange(inCanonicalJSON json: UnsafeBufferPointer<UInt8>, length: Int? = nil)
        -> Range<Int>?
    {
        guard json.last == UInt8(ascii: "}") else { return nil }
        var end = json.count - 1  // the first byte after the last string value's closing quote
        for member in membersAfterSystem.reversed() {
            var start = end
            while start > 0, Self.isNumberByte(json[start - 1]) { start -= 1 }
            guard start < end, start >= member.count,
                json[(start - member.count)..<start].elementsEqual(member)
            else { continue }
            end = start - member.count
        }
        guard end > 0, json[end - 1] == UInt8(ascii: "\"") else { return nil }
        let close = end - 1
        func isKey(at index: Int) -> Bool {
            index >= 0 && index + systemKey.count <= close
                && json[index..<(index + systemKey.count)].elementsEqual(systemKey)
        }
        if let length, isKey(at: close - length - systemKey.count) {
            return (close - length)..<close
        }
        var index = close - systemKey.count
        while index >= 0 {
            if isKey(at: index) { return (index + systemKey.count)..<close }
            index -= 1
        }
        return nil
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            true
        default: false
        }
    }
}
