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
        for message in messages {
            writer.beginObject()
            writer.key("content")
            writer.string(message.content)
            writer.key("role")
            writer.string(message.role.rawValue)
            writer.endObject()
        }
        writer.endArray()
        writer.key("model")
        writer.string(model)
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
        return writer.bytes
    }

    /// The canonical JSON as text, as `CanonicalJSON.text` gives it (empty when it cannot be
    /// encoded).
    var canonicalText: String {
        canonicalJSON.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}
