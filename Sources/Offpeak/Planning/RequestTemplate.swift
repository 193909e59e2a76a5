/// The requests of one job and tier, which differ only in their user message: their canonical JSON
/// written once around the message, so each one costs its own text, not the job's prompt again.
///
/// `offpeak submit` makes a request per line. Written whole, each escaped the job's system prompt
/// twice (payload and key; W-inbox's is ~5 KB) and hashed the key's JSON from the start. A template
/// escapes the prompt once, and hashes once the key's text up to the message; a line then escapes
/// its message, copies the template's two halves around it, and hashes the message and the part
/// after it. The payload and key are byte for byte `RequestPlanner.payloadAndKey`'s (tests hold the
/// two together), so cached answers stay valid.
struct RequestTemplate: Sendable {
    /// The payload's canonical JSON before and after the message's (escaped) text.
    private let head: [UInt8]
    private let tail: [UInt8]
    /// The key's digest of the provider and the key's JSON up to the message's text (the key's
    /// JSON differs from the payload's only before it: the prefix-cache marker is left out).
    private let keyHead: SHA256.Running

    /// Nil when `request` has no message, or a number that cannot be written (as
    /// `canonicalJSON` is nil); its requests are then made whole, one by one.
    init?(provider: ProviderKind, request: CompletionRequest) {
        var keyRequest = request
        keyRequest.cacheSystemPrompt = false
        guard let payload = request.canonicalJSONAroundLastMessage,
            let key = keyRequest.canonicalJSONAroundLastMessage,
            payload.bytes[payload.hole...] == key.bytes[key.hole...]
        else { return nil }
        head = Array(payload.bytes[..<payload.hole])
        tail = Array(payload.bytes[payload.hole...])
        var running = SHA256.Running()
        running.update(RequestPlanner.keyPrefix(provider))
        running.update(Array(key.bytes[..<key.hole]))
        keyHead = running
    }

    /// The payload and cache key of the template's request with `userMessage` as its last message.
    func payloadAndKey(userMessage: String) -> (payload: String, cacheKey: String) {
        var message: [UInt8] = []
        message.reserveCapacity(userMessage.utf8.count + 16)
        CanonicalJSONWriter.appendEscaping(userMessage, to: &message)
        var key = keyHead
        key.update(message)
        key.update(tail)
        var payload = head
        payload.reserveCapacity(head.count + message.count + tail.count)
        payload.append(contentsOf: message)
        payload.append(contentsOf: tail)
        return (String(decoding: payload, as: UTF8.self), key.hex())
    }
}
