import Foundation

/// Gemini's Batch Mode with inlined requests: a batch is created at the model's
/// `:batchGenerateContent` (`{base}/v1beta/models/{model}:batchGenerateContent`) with offpeak's
/// label as its `displayName`, each request the `generateContent` body a live call sends with its
/// custom id as `metadata.key`; it is a long-running operation (`batches/{id}`) whose inlined
/// responses come back with it once it ended.
///
/// The responses come in the order of the requests, and the API does not always give their
/// `metadata` back: a response without it is matched by its place, the requests having been sent
/// in the order of their custom ids; when the counts differ, nothing is matched by place.
struct GeminiBatches: BatchAPI {
    let baseURL: String
    let exchange: BatchExchange

    /// Inlined requests may total 20 MB.
    var limits: BatchLimits { BatchLimits(maxRequests: 50_000, maxBytes: 20 * 1024 * 1024) }

    private var redactor: Redactor { exchange.redactor }
    private func url(_ path: String) -> String {
        ProviderTransport.endpoint(baseURL, "/\(GeminiProvider.apiVersion)/" + path)
    }

    /// The `displayName` a batch is created with, and found again by.
    static func displayName(_ label: String) -> String { "offpeak-" + label }

    func create(label: String, requests: [BatchRequest]) throws(ProviderError) -> RemoteBatch {
        guard let model = requests.first?.request.model else { throw .badResponse("a batch needs a request") }
        var body = Data(#"{"batch":{"displayName":"#.utf8)
        body.append(try BatchExchange.literal(Self.displayName(label)))
        body.append(Data(#","inputConfig":{"requests":{"requests":["#.utf8))
        for (index, item) in requests.sorted(by: { $0.customID < $1.customID }).enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(Data(#"{"metadata":{"key":"#.utf8))
            body.append(try BatchExchange.literal(item.customID))
            body.append(Data(#"},"request":"#.utf8))
            body.append(try GeminiProvider.requestBody(for: item.request))
            body.append(UInt8(ascii: "}"))
        }
        body.append(Data("]}}}}".utf8))
        // Not idempotent: a create that may have reached the server is never sent again.
        let answer = try exchange.data(
            "POST", url("models/" + GeminiProvider.modelPath(model) + ":batchGenerateContent"), body: body,
            repeats: .ifNeverActedOn)
        return try remote(try Self.object(answer, redactor: redactor))
    }

    func retrieve(_ id: String) throws(ProviderError) -> RemoteBatch {
        try remote(try operation(id))
    }

    /// Asks for the cancel (an empty answer), then reads the batch as it now is.
    func cancel(_ id: String) throws(ProviderError) -> RemoteBatch {
        _ = try exchange.data("POST", url(Self.path(id) + ":cancel"), body: Data("{}".utf8))
        return try retrieve(id)
    }

    /// Newest first, until a batch carries the label's `displayName` (found) or the batches are
    /// older than the label's batch could be (absent).
    func find(_ search: BatchSearch) throws(ProviderError) -> BatchSearch.Finding {
        let earliest = search.preparedAt.addingTimeInterval(-600)
        var token: String?
        while true {
            var address = url("batches") + "?pageSize=100"
            if let token { address += "&pageToken=" + BatchExchange.query(token) }
            let page = try Self.object(try exchange.data("GET", address), redactor: redactor)
            for operation in page["operations"] as? [[String: Any]] ?? [] {
                let batch = try remote(operation)
                if batch.label == search.label, !search.known.contains(batch.id) { return .found(batch) }
                if let created = batch.createdAt, created < earliest { return .absent }
            }
            guard let next = page["nextPageToken"] as? String, !next.isEmpty else { return .absent }
            token = next
        }
    }

    func results(of batch: RemoteBatch, requests: [String: CompletionRequest]) throws(ProviderError)
        -> [BatchResult]
    {
        let operation = try operation(batch.id)
        let output =
            (operation["response"] as? [String: Any])
            ?? ((operation["metadata"] as? [String: Any])?["output"] as? [String: Any])
        let holder = output?["inlinedResponses"] as? [String: Any]
        let responses = holder?["inlinedResponses"] as? [[String: Any]] ?? []
        let keys = requests.keys.sorted()
        let byPlace = responses.count == keys.count
        var results: [BatchResult] = []
        for (index, item) in responses.enumerated() {
            let key = (item["metadata"] as? [String: Any])?["key"] as? String ?? (byPlace ? keys[index] : nil)
            guard let key else {
                throw .badResponse(
                    "batch \(batch.id) answered \(responses.count) requests without their keys, for "
                        + "\(keys.count) sent: they cannot be matched")
            }
            results.append(BatchResult(customID: redactor.redact(key), outcome: outcome(item, key, requests)))
        }
        return results
    }

    /// One inlined response: the answer, or the request's error.
    private func outcome(_ item: [String: Any], _ key: String, _ requests: [String: CompletionRequest])
        -> BatchResult.Outcome
    {
        if let error = item["error"] as? [String: Any] {
            let message = redactor.redact(error["message"] as? String ?? "request failed")
            let status = (error["code"] as? NSNumber)?.intValue ?? 0
            switch error["status"] as? String {
            case "DEADLINE_EXCEEDED": return .expired
            case "CANCELLED": return .canceled
            default:
                let invalid = (400..<500).contains(status) && status != 429
                return invalid ? .invalid(message) : .errored("HTTP \(status): \(message)")
            }
        }
        do {
            let request = BatchExchange.request(key, in: requests)
            let body = BatchExchange.bytes(item["response"] ?? [:])
            return .succeeded(
                try GeminiProvider.parseResponse(body, for: request, redactor: redactor).redacted(
                    by: redactor))
        } catch {
            return .errored(error.redacted(by: redactor).description)
        }
    }

    private func operation(_ id: String) throws(ProviderError) -> [String: Any] {
        try Self.object(try exchange.data("GET", url(Self.path(id))), redactor: redactor)
    }

    /// A batch operation as offpeak follows it: its `metadata` is the batch.
    private func remote(_ operation: [String: Any]) throws(ProviderError) -> RemoteBatch {
        let batch = operation["metadata"] as? [String: Any] ?? [:]
        guard let name = (batch["name"] as? String) ?? (operation["name"] as? String) else {
            throw .badResponse("the batch operation has no `name`")
        }
        let state = batch["state"] as? String ?? "BATCH_STATE_PENDING"
        var remote = RemoteBatch(
            id: name, phase: Self.phase(state, done: operation["done"] as? Bool), status: state)
        let stats = batch["batchStats"] as? [String: Any] ?? [:]
        func count(_ key: String) -> Int { Int("\(stats[key] ?? 0)") ?? 0 }
        remote.counts = RemoteBatch.Counts(
            processing: count("pendingRequestCount"), succeeded: count("successfulRequestCount"),
            errored: count("failedRequestCount"))
        remote.createdAt = BatchExchange.date(batch["createTime"] as? String)
        remote.endedAt = BatchExchange.date(batch["endTime"] as? String)
        if let shown = batch["displayName"] as? String, shown.hasPrefix("offpeak-") {
            remote.label = String(shown.dropFirst("offpeak-".count))
        }
        if state.hasSuffix("_FAILED"), let error = operation["error"] as? [String: Any] {
            remote.failure = error["message"] as? String ?? state
        }
        return remote.redacted(by: redactor)
    }

    /// `BATCH_STATE_*` (and the SDKs' `JOB_STATE_*`): pending and running are in progress; the
    /// rest have ended.
    static func phase(_ state: String, done: Bool?) -> RemoteBatch.Phase {
        if done == true { return .ended }
        let word = state.split(separator: "_").last.map(String.init) ?? state
        return ["PENDING", "RUNNING", "UNSPECIFIED", "QUEUED"].contains(word) ? .inProgress : .ended
    }

    /// `batches/123` as a path, each segment escaped.
    private static func path(_ id: String) -> String {
        id.split(separator: "/", omittingEmptySubsequences: false).map { BatchExchange.query(String($0)) }
            .joined(
                separator: "/")
    }

    private static func object(_ data: Data, redactor: Redactor) throws(ProviderError) -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw .badResponse(
                "answer is not a JSON object: " + ProviderTransport.snippet(of: data, redactor: redactor))
        }
        return object
    }
}
