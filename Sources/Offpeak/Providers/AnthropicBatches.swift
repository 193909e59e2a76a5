import Foundation

/// Anthropic's Message Batches (`{base}/v1/messages/batches`), for the Anthropic API and for
/// `offpeak-sim`, which speaks it. Each request's `params` is exactly the Messages body a live
/// call sends, and each succeeded result is read as a live answer is.
struct AnthropicBatches: BatchAPI {
    let baseURL: String
    let exchange: BatchExchange

    var limits: BatchLimits { .anthropic }

    private var batchesURL: String { ProviderTransport.endpoint(baseURL, "/v1/messages/batches") }
    private var redactor: Redactor { exchange.redactor }

    func create(label: String, requests: [BatchRequest]) throws(ProviderError) -> RemoteBatch {
        var body = Data(#"{"requests":["#.utf8)
        for (index, item) in requests.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(Data(#"{"custom_id":"#.utf8))
            body.append(try BatchExchange.literal(item.customID))
            body.append(Data(#","params":"#.utf8))
            body.append(try AnthropicProvider.requestBody(for: item.request))
            body.append(UInt8(ascii: "}"))
        }
        body.append(Data("]}".utf8))
        // Not idempotent: a create that may have reached the server is never sent again.
        let batch = try exchange.json(
            MessageBatch.self, "POST", batchesURL, body: body, repeats: .ifNeverActedOn)
        return batch.remote.redacted(by: redactor)
    }

    func retrieve(_ id: String) throws(ProviderError) -> RemoteBatch {
        try exchange.json(MessageBatch.self, "GET", url(id)).remote.redacted(by: redactor)
    }

    func cancel(_ id: String) throws(ProviderError) -> RemoteBatch {
        try exchange.json(MessageBatch.self, "POST", url(id) + "/cancel").remote.redacted(by: redactor)
    }

    /// Anthropic keeps no label: the candidates are the batches created while the create call
    /// could have been running, not already known; one whose results carry the label's custom ids
    /// is the one. A candidate still running cannot be read yet, so the answer waits for it.
    func find(_ search: BatchSearch) throws(ProviderError) -> BatchSearch.Finding {
        let earliest = search.preparedAt.addingTimeInterval(-600)
        var running: [String] = []
        var after: String?
        while true {
            var url = batchesURL + "?limit=100"
            if let after { url += "&after_id=" + BatchExchange.query(after) }
            let page = try exchange.json(Page.self, "GET", url)
            for batch in page.data {
                let remote = batch.remote.redacted(by: redactor)
                guard let created = remote.createdAt else { continue }
                if created < earliest { return running.isEmpty ? .absent : Self.undecided(running) }
                guard created <= search.createdBy, !search.known.contains(remote.id) else { continue }
                guard remote.phase == .ended else {
                    running.append(remote.id)
                    continue
                }
                let ids = try results(of: remote, requests: [:]).map(\.customID)
                if !ids.isEmpty, ids.allSatisfy({ $0.hasPrefix(search.customIDPrefix) }) {
                    return .found(remote)
                }
            }
            guard page.hasMore, let last = page.lastId else { break }
            after = last
        }
        return running.isEmpty ? .absent : Self.undecided(running)
    }

    func results(of batch: RemoteBatch, requests: [String: CompletionRequest]) throws(ProviderError)
        -> [BatchResult]
    {
        let data = try download(batch)
        return try BatchExchange.lines(data, redactor: redactor).map { line throws(ProviderError) in
            try result(line, requests: requests)
        }
    }

    /// The results file, from `results_url` resolved against the base URL (`ProviderURL`), or
    /// from the documented `{base}/v1/messages/batches/{id}/results` when the batch names none or
    /// names another host: the key goes to the base URL's host alone. An HTTP error from that
    /// stand-in says which URL the provider had named.
    private func download(_ batch: RemoteBatch) throws(ProviderError) -> Data {
        let documented = "/v1/messages/batches/" + BatchExchange.query(batch.id) + "/results"
        let location: ProviderURL
        do {
            location = try ProviderURL.resolve(batch.resultsURL, base: baseURL, documented: documented)
        } catch { throw error.redacted(by: redactor) }
        do {
            return try exchange.data("GET", location.url, largeBody: true)
        } catch {
            guard let elsewhere = location.elsewhere, case .http(let status, let message, let url) = error
            else {
                throw error
            }
            let why =
                "; the provider's results_url was \(elsewhere), on another host than the base URL, "
                + "and offpeak sends its key to the base URL's host only"
            throw .http(status: status, message: message + redactor.redact(why), url: url)
        }
    }

    /// One results line: `{custom_id, result: {type, message | error}}`.
    private func result(_ line: [String: Any], requests: [String: CompletionRequest]) throws(ProviderError)
        -> BatchResult
    {
        guard let customID = line["custom_id"] as? String else {
            throw .badResponse("a results line lacks `custom_id`")
        }
        let result = line["result"] as? [String: Any] ?? [:]
        let outcome: BatchResult.Outcome
        switch result["type"] as? String {
        case "succeeded":
            let message = BatchExchange.bytes(result["message"] ?? [:])
            do {
                let request = BatchExchange.request(customID, in: requests)
                outcome = .succeeded(
                    try AnthropicProvider.parseResponse(message, for: request, redactor: redactor)
                        .redacted(by: redactor))
            } catch {
                outcome = .errored(error.redacted(by: redactor).description)
            }
        case "errored":
            // The API nests it, `{"type":"error","error":{"type":...,"message":...}}`; a flat
            // `{"type":...,"message":...}` is read too.
            var error = result["error"] as? [String: Any] ?? [:]
            if let inner = error["error"] as? [String: Any] { error = inner }
            let type = error["type"] as? String ?? "error"
            let message = redactor.redact(error["message"] as? String ?? type)
            outcome = type == "invalid_request_error" ? .invalid(message) : .errored("\(type): \(message)")
        case "canceled": outcome = .canceled
        case "expired": outcome = .expired
        case let other:
            throw .badResponse(
                redactor.redact("result of \(customID) has an unknown type \(other ?? "null")"))
        }
        return BatchResult(customID: redactor.redact(customID), outcome: outcome)
    }

    private func url(_ id: String) -> String { batchesURL + "/" + BatchExchange.query(id) }

    private static func undecided(_ ids: [String]) -> BatchSearch.Finding {
        .undecided(
            "batch \(ids.joined(separator: ", ")) may be this one and has not ended; its results say "
                + "which once it has")
    }
}

/// The wire shapes, spelled in camelCase; the coders convert from snake_case.
extension AnthropicBatches {
    struct MessageBatch: Decodable {
        struct Counts: Decodable {
            var processing: Int?
            var succeeded: Int?
            var errored: Int?
            var canceled: Int?
            var expired: Int?
        }

        var id: String
        var processingStatus: String
        var requestCounts: Counts?
        var createdAt: String?
        var expiresAt: String?
        var endedAt: String?
        var resultsUrl: String?

        var remote: RemoteBatch {
            let phase: RemoteBatch.Phase
            switch processingStatus {
            case "ended": phase = .ended
            case "canceling": phase = .canceling
            default: phase = .inProgress
            }
            let counts = RemoteBatch.Counts(
                processing: requestCounts?.processing ?? 0, succeeded: requestCounts?.succeeded ?? 0,
                errored: requestCounts?.errored ?? 0, canceled: requestCounts?.canceled ?? 0,
                expired: requestCounts?.expired ?? 0)
            return RemoteBatch(
                id: id, phase: phase, status: processingStatus, counts: counts,
                createdAt: BatchExchange.date(createdAt), expiresAt: BatchExchange.date(expiresAt),
                endedAt: BatchExchange.date(endedAt), resultsURL: resultsUrl)
        }
    }

    struct Page: Decodable {
        var data: [MessageBatch]
        var hasMore: Bool
        var firstId: String?
        var lastId: String?
    }
}
