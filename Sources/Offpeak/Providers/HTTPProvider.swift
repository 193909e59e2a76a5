import Foundation

/// A provider spoken to over HTTP: each says where a request goes, with which headers, how a
/// request becomes a body and how a body becomes an answer; the exchange itself (retries,
/// redaction, rate-limit headers) is the transport's, the same for every provider.
protocol HTTPProvider: CompletionProvider {
    var transport: ProviderTransport { get }
    var endpoint: String { get }
    /// Where `request` goes: `endpoint`, unless the API names the model in the path (Gemini).
    func endpoint(for request: CompletionRequest) -> String
    var headers: [(name: String, value: String)] { get }
    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data
    /// The body of a call in `lane` (`live` or `flex`); a provider without flex processing keeps the
    /// default, which refuses a flex call as OpenAI refuses one to a model without it (a 400).
    static func requestBody(for request: CompletionRequest, lane: CallLane) throws(ProviderError) -> Data
    static func parseResponse(_ body: Data, for request: CompletionRequest, redactor: Redactor)
        throws(ProviderError) -> CompletionResponse
}

extension HTTPProvider {
    static func requestBody(for request: CompletionRequest, lane: CallLane) throws(ProviderError) -> Data {
        guard lane == .live else {
            throw .http(status: 400, message: "this provider has no \(lane.rawValue) processing")
        }
        return try requestBody(for: request)
    }

    var redactor: Redactor { transport.options.redactor }

    func endpoint(for request: CompletionRequest) -> String { endpoint }

    func complete(_ request: CompletionRequest) throws(ProviderError) -> CompletionResponse {
        try transport.exchange(
            endpoint(for: request), headers: headers, body: try Self.requestBody(for: request)
        ) {
            body throws(ProviderError) in try Self.parseResponse(body, for: request, redactor: redactor)
        }
    }

    func call(_ request: CompletionRequest, timeout: TimeInterval?, lane: CallLane) -> CallReply {
        send(request, lane: lane, timeout: timeout)
    }

    /// The call as `request` is, in `lane`: what `call` does unless a provider shapes its own
    /// (Gemini naming a context cache), which then sends the rest this way.
    func send(_ request: CompletionRequest, lane: CallLane, timeout: TimeInterval?) -> CallReply {
        let body: Data
        do { body = try Self.requestBody(for: request, lane: lane) } catch {
            return CallReply(answer: .failure(error), attempts: 0)
        }
        return send(request, body: body, timeout: timeout)
    }

    /// Sends `body`, the wire form of `request`, retrying as the policy says, and reads the answer.
    func send(_ request: CompletionRequest, body: Data, timeout: TimeInterval?) -> CallReply {
        let repeats: ProviderTransport.Repeats =
            request.answerKeys == nil ? .asPolicySays : .unlessTheFormIsRefused
        return transport.call(
            endpoint(for: request), headers: headers, body: body, timeout: timeout, repeats: repeats
        ) {
            body throws(ProviderError) in
            try Self.parseResponse(body, for: request, redactor: redactor)
        }
    }
}
