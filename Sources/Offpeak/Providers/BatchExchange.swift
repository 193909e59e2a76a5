import Foundation

/// The exchanges both batch clients make over their provider's transport: JSON in and out, file
/// uploads, and results downloads, with the provider's key headers. What the server sends back
/// leaves here redacted, errors included; bodies and headers are never logged (the transport logs
/// method, path, status and latency only).
struct BatchExchange: Sendable {
    /// A results download may be this large (held in memory): far above the 64 MB a live answer
    /// may take, as a batch of 100,000 answers can run to hundreds of megabytes.
    static let resultsBodyBytes = 512 * 1024 * 1024

    let transport: ProviderTransport
    /// The provider's headers less `content-type`, which each exchange sets for its own body.
    let headers: [(name: String, value: String)]

    init(transport: ProviderTransport, headers: [(name: String, value: String)]) {
        self.transport = transport
        self.headers = headers.filter { $0.name.lowercased() != "content-type" }
    }

    var redactor: Redactor { transport.options.redactor }

    /// The 2xx body of one exchange, or its failure (redacted), after what `repeats` allows.
    func data(
        _ method: String, _ url: String, body: Data = Data(), contentType: String = "application/json",
        largeBody: Bool = false, repeats: ProviderTransport.Repeats = .asPolicySays
    ) throws(ProviderError) -> Data {
        let sent =
            body.isEmpty && method == "GET" ? headers : headers + [(name: "content-type", value: contentType)]
        let delivery = transport.send(
            url, method: method, headers: sent, body: body,
            largeBodyBytes: largeBody ? Self.resultsBodyBytes : nil, repeats: repeats)
        switch delivery.response {
        case .success(let response): return response.body
        case .failure(let error): throw error.redacted(by: redactor)
        }
    }

    /// `data`, decoded as JSON.
    func json<Value: Decodable>(
        _ type: Value.Type, _ method: String, _ url: String, body: Data = Data(),
        contentType: String = "application/json", repeats: ProviderTransport.Repeats = .asPolicySays
    ) throws(ProviderError) -> Value {
        let answer = try data(method, url, body: body, contentType: contentType, repeats: repeats)
        return try ProviderTransport.decode(type, from: answer, redactor: redactor)
    }

    /// A JSON string literal, for bodies assembled around request bodies already encoded.
    static func literal(_ text: String) throws(ProviderError) -> Data {
        try ProviderTransport.encode(text)
    }

    /// The lines of a JSONL download that hold something, each a JSON object; a line that is
    /// not one is reported by its number.
    static func lines(_ data: Data, redactor: Redactor) throws(ProviderError) -> [[String: Any]] {
        var objects: [[String: Any]] = []
        for (index, line) in data.split(separator: UInt8(ascii: "\n")).enumerated() {
            let text = Data(line)
            if text.allSatisfy({ $0 == 0x20 || $0 == 0x0d || $0 == 0x09 }) { continue }
            guard let object = (try? JSONSerialization.jsonObject(with: text)) as? [String: Any] else {
                throw .badResponse(
                    "results line \(index + 1) is not a JSON object: "
                        + ProviderTransport.snippet(of: text, redactor: redactor))
            }
            objects.append(object)
        }
        return objects
    }

    /// A JSON value re-encoded as bytes, for the providers' answer parsers.
    static func bytes(_ value: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: value)) ?? Data()
    }

    /// An RFC 3339 time, with or without fractional seconds.
    static func date(_ text: String?) -> Date? {
        guard let text else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    /// What was sent under a custom id, or a stand-in when the caller did not say (the answer's
    /// own usage is then the only count).
    static func request(_ customID: String, in requests: [String: CompletionRequest]) -> CompletionRequest {
        requests[customID] ?? CompletionRequest(model: "", messages: [], maxTokens: 0)
    }

    /// `text` (a batch, file or page id) made safe in a URL's path or query, as every batch API's
    /// ids are sent.
    static func query(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-", "_", "."])) ?? text
    }
}

extension RemoteBatch {
    /// The batch with every text the server wrote passed through `redactor`.
    func redacted(by redactor: Redactor) -> RemoteBatch {
        var batch = self
        batch.id = redactor.redact(id)
        batch.status = redactor.redact(status)
        batch.label = label.map(redactor.redact)
        batch.resultsURL = resultsURL.map(redactor.redact)
        batch.outputFileID = outputFileID.map(redactor.redact)
        batch.errorFileID = errorFileID.map(redactor.redact)
        batch.failure = failure.map(redactor.redact)
        return batch
    }
}
