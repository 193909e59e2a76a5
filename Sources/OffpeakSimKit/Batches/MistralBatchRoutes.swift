import Foundation
import Hummingbird

/// Mistral's batch jobs, under `/mistral/v1` as its chat completions are (`MistralRoutes`): create a
/// job from uploaded JSONL files (`input_files`, each line `{custom_id, body}`) or inline
/// `requests`, for one `model`; retrieve, list (newest first, by page, filtered by
/// `created_after`, `metadata` and `status`) and cancel it. Its results are an output and an error
/// file, lines in OpenAI's shape (`OpenAIBatchFiles`), read at `/mistral/v1/files/{id}/content`.
struct MistralBatchRoutes: Sendable {
    static let prefix = "/mistral"
    static let endpoint = "/v1/chat/completions"

    let state: SimState
    private var http: BatchHTTP { BatchHTTP(state: state, api: MistralRoutes()) }

    func register(on router: Router<some RequestContext>) {
        let http = http
        let jobs = Self.prefix + "/v1/batch/jobs"
        router.post(RouterPath(jobs)) { request, _ in
            await http.serve(request) { body in try create(body) }
        }
        router.get(RouterPath(jobs)) { request, _ in
            await http.serve(request) { _ in try list(request) }
        }
        router.get(RouterPath(jobs + "/:id")) { request, context in
            await http.serve(request) { _ in http.json(object(try current(try found(context).id))) }
        }
        router.post(RouterPath(jobs + "/:id/cancel")) { request, context in
            await http.serve(request) { _ in
                let job = try state.batches.cancel(try found(context).id) ?? found(context)
                return http.json(object(job))
            }
        }
    }

    private func found(_ context: some RequestContext) throws -> BatchJob {
        let id = context.parameters.get("id") ?? ""
        guard let job = state.batches.job(id), job.api == .mistral else {
            throw BatchHTTP.notFound("batch job", id)
        }
        return job
    }

    private func current(_ id: String) throws -> BatchJob {
        guard let job = http.runner.current(id) else { throw BatchHTTP.notFound("batch job", id) }
        return job
    }

    private func create(_ body: Data) throws -> Response {
        let object = try BatchHTTP.object(body, what: "body")
        guard object["endpoint"] as? String == Self.endpoint else {
            throw SimAPIError(
                .invalidRequest, "endpoint: offpeak-sim's batch jobs take only \(Self.endpoint)")
        }
        guard let model = object["model"] as? String, !model.isEmpty else {
            throw SimAPIError(.invalidRequest, "model: a batch job needs a model (or an agent_id)")
        }
        var lines: [[String: Any]] = []
        if let inline = object["requests"] as? [[String: Any]] {
            lines = inline
        } else if let files = object["input_files"] as? [String], !files.isEmpty {
            for id in files {
                guard let file = state.batches.file(id) else { throw BatchHTTP.notFound("file", id) }
                let text = String(decoding: file.data, as: UTF8.self)
                for (index, line) in text.split(whereSeparator: \.isNewline).enumerated()
                where !line.allSatisfy(\.isWhitespace) {
                    lines.append(try BatchHTTP.object(Data(line.utf8), what: "\(id), line \(index + 1)"))
                }
            }
        } else {
            throw SimAPIError(.invalidRequest, "input_files or requests: one is required")
        }
        var requests: [BatchRequest] = []
        var seen = Set<String>()
        for (index, line) in lines.enumerated() {
            guard var body = line["body"] as? [String: Any] else {
                throw SimAPIError(.invalidRequest, "request \(index + 1): body: expected a JSON object")
            }
            let customID = line["custom_id"] as? String ?? String(index)
            guard seen.insert(customID).inserted else {
                throw SimAPIError(.invalidRequest, "request \(index + 1): custom_id \(customID) used twice")
            }
            // The job's model answers every request; a body need not name it.
            body["model"] = model
            requests.append(BatchRequest(customID: customID, body: BatchHTTP.encode(body)))
        }
        guard !requests.isEmpty else { throw SimAPIError(.invalidRequest, "the batch job holds no requests") }
        var job = BatchJob(
            id: UUID().uuidString.lowercased(), api: .mistral, createdAt: Date(), requests: requests)
        job.inputFileID = (object["input_files"] as? [String])?.joined(separator: ",")
        job.endpoint = Self.endpoint
        job.model = model
        job.metadata = (object["metadata"] as? [String: Any])?.compactMapValues { $0 as? String }
        state.batches.add(job)
        state.stats.recordBatchCreated()
        return http.json(self.object(job))
    }

    private func list(_ request: Request) throws -> Response {
        let query = request.uri.queryParameters
        let page = query.get("page").flatMap { Int($0) } ?? 0
        let size = query.get("page_size").flatMap { Int($0) } ?? 100
        guard page >= 0, (1...1000).contains(size) else {
            throw SimAPIError(.invalidRequest, "page: at least 0; page_size: 1 to 1000")
        }
        let after = query.get("created_after").flatMap { Self.date(String($0)) }
        // The SDK sends `metadata` exploded: each of its keys a parameter of its own.
        var metadata: [String: String] = [:]
        for (key, value) in query where !Self.listParameters.contains(String(key)) {
            metadata[String(key)] = String(value)
        }
        let model = query.get("model").map { String($0) }
        let statuses = query.getAll("status").map { String($0) }
        let jobs = state.batches.page(api: .mistral, limit: Int.max, afterID: nil, beforeID: nil).ids
            .compactMap { http.runner.current($0) }
            .filter { job in
                (after.map { job.createdAt >= $0.addingTimeInterval(-1) } ?? true)
                    && (model.map { job.model == $0 } ?? true)
                    && metadata.allSatisfy { job.metadata?[$0.key] == $0.value }
                    && (statuses.isEmpty || statuses.contains(Self.status(job)))
            }
        let shown = jobs.dropFirst(page * size).prefix(size)
        return http.json(["object": "list", "data": shown.map(object), "total": jobs.count])
    }

    /// The list's own query parameters; any other is a `metadata` key.
    static let listParameters: Set<String> = [
        "page", "page_size", "model", "agent_id", "created_after", "created_by_me", "status", "order_by",
    ]

    /// `created_after` as the SDK sends it: with or without fractions of a second, with a zone or
    /// without (UTC).
    static func date(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions.insert(.withFractionalSeconds)
        for candidate in [text, text + "Z"] {
            if let date = plain.date(from: candidate) ?? fractional.date(from: candidate) { return date }
        }
        return nil
    }

    static func status(_ job: BatchJob) -> String {
        switch job.phase {
        case .inProgress: "RUNNING"
        case .canceling: "CANCELLATION_REQUESTED"
        case .ended: job.cancelInitiatedAt != nil ? "CANCELLED" : "SUCCESS"
        case .failed: "FAILED"
        }
    }

    /// The `batch` job object as the API documents it (and the `mistralai` SDK's `BatchJob` reads it).
    private func object(_ job: BatchJob) -> [String: Any] {
        let counts = job.counts
        let ended = job.phase == .ended
        let failed = counts.errored + counts.expired + counts.canceled
        func time(_ date: Date?) -> Any { date.map { Int($0.timeIntervalSince1970) } ?? NSNull() }
        return [
            "id": job.id, "object": "batch",
            "input_files": job.inputFileID?.split(separator: ",").map(String.init) ?? [],
            "metadata": job.metadata ?? NSNull(), "endpoint": job.endpoint, "model": job.model ?? NSNull(),
            "agent_id": NSNull(),
            "output_file": ended && counts.succeeded > 0
                ? OpenAIBatchFiles.outputID(job.id) as Any : NSNull(),
            "error_file": ended && failed > 0 ? OpenAIBatchFiles.errorID(job.id) as Any : NSNull(),
            "errors": job.failure.map { [["message": $0, "count": 1]] } ?? [],
            "status": Self.status(job), "created_at": Int(job.createdAt.timeIntervalSince1970),
            "total_requests": job.requests.count, "completed_requests": ended ? counts.succeeded + failed : 0,
            "succeeded_requests": counts.succeeded, "failed_requests": failed,
            "started_at": time(job.createdAt), "completed_at": ended ? time(job.endedAt) : NSNull(),
        ]
    }
}
