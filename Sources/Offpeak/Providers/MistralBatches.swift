import Foundation

/// Mistral's batch jobs: the requests go up as a JSONL file (`POST {base}/files`, purpose `batch`,
/// as OpenAI's), each line `{custom_id, body}`; a job is created from it
/// (`POST {base}/batch/jobs`) with the model, the endpoint its requests stand for
/// (`/v1/chat/completions`) and offpeak's label in its `metadata`; its answers come back in an
/// output file and an error file whose lines are OpenAI's shape, read by `OpenAIBatches`.
/// `base` includes `/v1`, as `https://api.mistral.ai/v1`.
struct MistralBatches: BatchAPI {
    static let endpoint = "/v1/chat/completions"

    let baseURL: String
    let exchange: BatchExchange

    /// A file of up to a million requests; offpeak's batches hold at most `BatchLane.mostRequests`.
    var limits: BatchLimits { BatchLimits(maxRequests: 1_000_000, maxBytes: 512 * 1024 * 1024) }

    private var redactor: Redactor { exchange.redactor }
    private var files: OpenAIBatches { OpenAIBatches(baseURL: baseURL, exchange: exchange) }
    private func url(_ path: String) -> String { ProviderTransport.endpoint(baseURL, path) }

    func create(label: String, requests: [BatchRequest]) throws(ProviderError) -> RemoteBatch {
        var lines = Data()
        for item in requests {
            lines.append(Data(#"{"custom_id":"#.utf8))
            lines.append(try BatchExchange.literal(item.customID))
            lines.append(Data(#","body":"#.utf8))
            lines.append(try MistralProvider.requestBody(for: item.request))
            lines.append(Data("}\n".utf8))
        }
        // An upload sent twice only leaves a spare file: it is retried as any call is.
        let file = try files.upload(lines, name: "offpeak-\(label).jsonl")
        let body = try ProviderTransport.encode(
            CreateJob(
                inputFiles: [file], endpoint: Self.endpoint, model: requests.first?.request.model ?? "",
                metadata: ["offpeak_batch": label], timeoutHours: 24))
        // Not idempotent: a create that may have reached the server is never sent again.
        return try exchange.json(Job.self, "POST", url("/batch/jobs"), body: body, repeats: .ifNeverActedOn)
            .remote(redactor: redactor)
    }

    func retrieve(_ id: String) throws(ProviderError) -> RemoteBatch {
        try exchange.json(Job.self, "GET", url("/batch/jobs/" + BatchExchange.query(id))).remote(
            redactor: redactor)
    }

    func cancel(_ id: String) throws(ProviderError) -> RemoteBatch {
        try exchange.json(Job.self, "POST", url("/batch/jobs/" + BatchExchange.query(id) + "/cancel"))
            .remote(redactor: redactor)
    }

    /// The jobs created since the batch was prepared (less ten minutes of clock skew), newest first,
    /// page by page, until one carries the label (found) or none is left (absent).
    func find(_ search: BatchSearch) throws(ProviderError) -> BatchSearch.Finding {
        let after = Timestamp.text(search.preparedAt.addingTimeInterval(-600), in: .gmt)
        var page = 0
        var seen = 0
        while true {
            let address =
                url("/batch/jobs") + "?page=\(page)&page_size=100&created_after=" + BatchExchange.query(after)
            let list = try exchange.json(Page.self, "GET", address)
            let jobs = list.data ?? []
            for job in jobs {
                let remote = job.remote(redactor: redactor)
                if remote.label == search.label, !search.known.contains(remote.id) { return .found(remote) }
            }
            seen += jobs.count
            guard !jobs.isEmpty, seen < list.total else { return .absent }
            page += 1
        }
    }

    func results(of batch: RemoteBatch, requests: [String: CompletionRequest]) throws(ProviderError)
        -> [BatchResult]
    {
        try files.results(of: batch, requests: requests)
    }
}

/// The batch jobs API's shapes, spelled in camelCase; the coders convert to and from snake_case.
extension MistralBatches {
    struct CreateJob: Encodable {
        var inputFiles: [String]
        var endpoint: String
        var model: String
        var metadata: [String: String]
        var timeoutHours: Int
    }

    struct Page: Decodable {
        var data: [Job]?
        var total: Int
    }

    struct Job: Decodable {
        struct Failure: Decodable {
            var message: String
        }

        var id: String
        var status: String
        var errors: [Failure]?
        var totalRequests: Int?
        var completedRequests: Int?
        var succeededRequests: Int?
        var failedRequests: Int?
        var createdAt: Double?
        var completedAt: Double?
        var outputFile: String?
        var errorFile: String?
        var metadata: [String: String]?

        /// Mistral's states (`QUEUED`, `RUNNING`, `SUCCESS`, `FAILED`, `TIMEOUT_EXCEEDED`,
        /// `CANCELLATION_REQUESTED`, `CANCELLED`) in both APIs' terms. A job that ran out of time
        /// ended: what it did not answer is missing from its files, and goes again. One that failed
        /// with no answer at all says why from `errors`.
        func remote(redactor: Redactor) -> RemoteBatch {
            let phase: RemoteBatch.Phase
            switch status {
            case "CANCELLATION_REQUESTED": phase = .canceling
            case "SUCCESS", "FAILED", "TIMEOUT_EXCEEDED", "CANCELLED": phase = .ended
            default: phase = .inProgress
            }
            let total = totalRequests ?? 0
            let succeeded = succeededRequests ?? 0
            let failed = failedRequests ?? 0
            let counts = RemoteBatch.Counts(
                processing: phase == .ended ? 0 : max(0, total - (completedRequests ?? 0)),
                succeeded: succeeded,
                errored: failed, canceled: status == "CANCELLED" ? max(0, total - succeeded - failed) : 0,
                expired: status == "TIMEOUT_EXCEEDED" ? max(0, total - succeeded - failed) : 0)
            var failure: String?
            if status == "FAILED", outputFile == nil, errorFile == nil {
                let messages = (errors ?? []).map(\.message)
                failure = messages.isEmpty ? "the batch job failed" : messages.joined(separator: "; ")
            }
            return RemoteBatch(
                id: id, phase: phase, status: status, counts: counts,
                createdAt: createdAt.map { Date(timeIntervalSince1970: $0) },
                expiresAt: createdAt.map { Date(timeIntervalSince1970: $0 + 24 * 3600) },
                endedAt: phase == .ended ? completedAt.map { Date(timeIntervalSince1970: $0) } : nil,
                label: metadata?["offpeak_batch"], outputFileID: outputFile, errorFileID: errorFile,
                failure: failure
            ).redacted(by: redactor)
        }
    }
}
