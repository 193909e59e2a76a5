import Foundation

/// OpenAI's Batch API: the requests go up as a JSONL file (`POST {base}/files`, purpose
/// `batch`), a batch is created from it (`POST {base}/batches`) with offpeak's label in its
/// metadata, and its answers come back in an output file and an error file. `base` includes
/// `/v1`, as `OPENAI_BASE_URL` does, and paths are joined to it as live calls join theirs.
struct OpenAIBatches: BatchAPI {
    /// The live endpoint each batch request stands for, as the API names it (not base-relative).
    static let endpoint = "/v1/chat/completions"
    /// The Responses API's, for a provider speaking it (`OpenAIResponsesProvider`).
    static let responsesEndpoint = "/v1/responses"

    let baseURL: String
    let exchange: BatchExchange
    /// Whether batches stand for the Responses API's requests, not chat completions'.
    var responses = false
    /// The body of a chat completion in a batch: OpenAI's, or a provider's that shapes it its own
    /// way behind the same Batch API (`GroqProvider`, JSON mode only).
    var chatBody: @Sendable (CompletionRequest) throws(ProviderError) -> Data = {
        request throws(ProviderError) in try OpenAIProvider.requestBody(for: request)
    }

    var limits: BatchLimits { .openAI }

    private var redactor: Redactor { exchange.redactor }
    private func url(_ path: String) -> String { ProviderTransport.endpoint(baseURL, path) }

    /// A batch's requests all stand for one endpoint: the Responses API's for a provider speaking
    /// it, unless one of them searches the web (searches go through chat completions' search models).
    func create(label: String, requests: [BatchRequest]) throws(ProviderError) -> RemoteBatch {
        let responses = self.responses && !requests.contains { $0.request.searchUses != nil }
        let endpoint = responses ? Self.responsesEndpoint : Self.endpoint
        var lines = Data()
        for item in requests {
            lines.append(Data(#"{"body":"#.utf8))
            lines.append(
                try responses
                    ? OpenAIResponsesProvider.requestBody(for: item.request)
                    : chatBody(item.request))
            lines.append(Data(#","custom_id":"#.utf8))
            lines.append(try BatchExchange.literal(item.customID))
            lines.append(Data(#","method":"POST","url":"\#(endpoint)"}"#.utf8))
            lines.append(UInt8(ascii: "\n"))
        }
        // An upload sent twice only leaves a spare file: it is retried as any call is.
        let file = try upload(lines, name: "offpeak-\(label).jsonl")
        let body = try ProviderTransport.encode(
            CreateRequest(
                inputFileId: file, endpoint: endpoint, completionWindow: "24h",
                metadata: ["offpeak_batch": label]))
        // Not idempotent: a create that may have reached the server is never sent again.
        let batch = try exchange.json(
            WireBatch.self, "POST", url("/batches"), body: body, repeats: .ifNeverActedOn)
        return batch.remote(redactor: redactor)
    }

    func retrieve(_ id: String) throws(ProviderError) -> RemoteBatch {
        try exchange.json(WireBatch.self, "GET", url("/batches/" + BatchExchange.query(id))).remote(
            redactor: redactor)
    }

    func cancel(_ id: String) throws(ProviderError) -> RemoteBatch {
        try exchange.json(WireBatch.self, "POST", url("/batches/" + BatchExchange.query(id) + "/cancel"))
            .remote(redactor: redactor)
    }

    /// Newest first, until a batch carries the label (found) or the batches are older than the
    /// label's batch could be (absent).
    func find(_ search: BatchSearch) throws(ProviderError) -> BatchSearch.Finding {
        let earliest = search.preparedAt.addingTimeInterval(-600)
        var after: String?
        while true {
            var address = url("/batches") + "?limit=100"
            if let after { address += "&after=" + BatchExchange.query(after) }
            let page = try exchange.json(Page.self, "GET", address)
            for batch in page.data {
                let remote = batch.remote(redactor: redactor)
                if remote.label == search.label, !search.known.contains(remote.id) { return .found(remote) }
                if let created = remote.createdAt, created < earliest { return .absent }
            }
            guard page.hasMore, let last = page.lastId ?? page.data.last?.id else { return .absent }
            after = last
        }
    }

    func results(of batch: RemoteBatch, requests: [String: CompletionRequest]) throws(ProviderError)
        -> [BatchResult]
    {
        var results: [BatchResult] = []
        for file in [batch.outputFileID, batch.errorFileID].compactMap({ $0 }) {
            let data = try exchange.data(
                "GET", url("/files/" + BatchExchange.query(file) + "/content"), largeBody: true)
            for line in try BatchExchange.lines(data, redactor: redactor) {
                results.append(try result(line, requests: requests))
            }
        }
        return results
    }

    /// One line of an output or error file: `{custom_id, response: {status_code, body}, error}`.
    private func result(_ line: [String: Any], requests: [String: CompletionRequest]) throws(ProviderError)
        -> BatchResult
    {
        guard let customID = line["custom_id"] as? String else {
            throw .badResponse("a results line lacks `custom_id`")
        }
        let outcome: BatchResult.Outcome
        let response = line["response"] as? [String: Any]
        let status = (response?["status_code"] as? NSNumber)?.intValue ?? 0
        let body = BatchExchange.bytes(response?["body"] ?? [:])
        if let error = line["error"] as? [String: Any] {
            let message = redactor.redact(error["message"] as? String ?? "request failed")
            switch error["code"] as? String {
            case "batch_expired": outcome = .expired
            case "batch_cancelled", "batch_canceled": outcome = .canceled
            default: outcome = .errored(message)
            }
        } else if (200..<300).contains(status) {
            do {
                let request = BatchExchange.request(customID, in: requests)
                // A Response object (`"object": "response"`) or a chat completion: whichever
                // endpoint the batch stood for, read from the answer itself.
                let parsed =
                    try Self.isResponse(body)
                    ? OpenAIResponsesProvider.parseResponse(body, for: request, redactor: redactor)
                    : OpenAIProvider.parseResponse(body, for: request, redactor: redactor)
                outcome = .succeeded(parsed.redacted(by: redactor))
            } catch {
                outcome = .errored(error.redacted(by: redactor).description)
            }
        } else {
            let message = ProviderTransport.errorDetails(in: body, redactor: redactor).message
            let invalid = (400..<500).contains(status) && status != 429
            outcome = invalid ? .invalid(message) : .errored("HTTP \(status): \(message)")
        }
        return BatchResult(customID: redactor.redact(customID), outcome: outcome)
    }

    /// `POST /files` as `multipart/form-data`: `purpose=batch` and the file; answers its id.
    func upload(_ file: Data, name: String) throws(ProviderError) -> String {
        let boundary = "offpeak-" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        var body = Data()
        body.append(
            Data(
                ("--\(boundary)\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n"
                    + "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(name)\"\r\n"
                    + "Content-Type: application/jsonl\r\n\r\n").utf8))
        body.append(file)
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        let uploaded = try exchange.json(
            UploadedFile.self, "POST", url("/files"), body: body,
            contentType: "multipart/form-data; boundary=\(boundary)")
        return uploaded.id
    }

    /// Whether a result's body is the Responses API's answer.
    private static func isResponse(_ body: Data) -> Bool {
        ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["object"] as? String
            == "response"
    }
}
