import Foundation
import Hummingbird

/// OpenAI's Batch API: create a batch from an uploaded JSONL file, retrieve, list and cancel it;
/// its results are the output and error files (`OpenAIBatchFiles`).
struct OpenAIBatchRoutes: Sendable {
    static let endpoint = "/v1/chat/completions"
    /// The Responses API's endpoint, which a batch may stand for too.
    static let responsesEndpoint = "/v1/responses"

    let state: SimState
    private var http: BatchHTTP { BatchHTTP(state: state, api: OpenAIRoutes()) }

    func register(on router: Router<some RequestContext>) {
        let http = http
        router.post("/v1/batches") { request, _ in
            await http.serveCreate(request) { body in try create(body) }
        }
        router.get("/v1/batches") { request, _ in
            await http.serve(request) { _ in try list(request) }
        }
        router.get("/v1/batches/:id") { request, context in
            await http.serve(request) { _ in
                let id = try found(context).id
                return http.json(object(try current(id)))
            }
        }
        router.post("/v1/batches/:id/cancel") { request, context in
            await http.serve(request) { _ in
                let job = try state.batches.cancel(try found(context).id) ?? found(context)
                return http.json(object(job))
            }
        }
    }

    private func found(_ context: some RequestContext) throws -> BatchJob {
        let id = context.parameters.get("id") ?? ""
        guard let job = state.batches.job(id), job.api == .openAI else {
            throw BatchHTTP.notFound("batch", id)
        }
        return job
    }

    private func current(_ id: String) throws -> BatchJob {
        guard let job = http.runner.current(id) else { throw BatchHTTP.notFound("batch", id) }
        return job
    }

    private func create(_ body: Data) throws -> Response {
        let object = try BatchHTTP.object(body, what: "body")
        guard let fileID = object["input_file_id"] as? String else {
            throw SimAPIError(.invalidRequest, "input_file_id: field required")
        }
        guard let file = state.batches.file(fileID) else { throw BatchHTTP.notFound("file", fileID) }
        guard let endpoint = object["endpoint"] as? String,
            [Self.endpoint, Self.responsesEndpoint].contains(endpoint)
        else {
            throw SimAPIError(
                .invalidRequest,
                "endpoint: offpeak-sim batches only \(Self.endpoint) and \(Self.responsesEndpoint)")
        }
        guard object["completion_window"] as? String == "24h" else {
            throw SimAPIError(.invalidRequest, "completion_window: expected \"24h\"")
        }
        var job = BatchJob(id: "batch_sim" + randomHex(), api: .openAI, createdAt: Date(), requests: [])
        job.inputFileID = fileID
        job.endpoint = endpoint
        job.metadata = object["metadata"] as? [String: String]
        do {
            job.requests = try Self.requests(in: file.data, endpoint: endpoint)
        } catch let error as SimAPIError {
            job.phase = .failed
            job.failure = error.message
            job.endedAt = job.createdAt
        }
        state.batches.add(job)
        state.stats.recordBatchCreated()
        var answer = self.object(job)
        if job.phase == .inProgress { answer["status"] = "validating" }
        return http.json(answer)
    }

    /// The input file's requests, each for `endpoint`; the batch fails on a bad line or on more than
    /// one model.
    static func requests(in data: Data, endpoint: String = endpoint) throws -> [BatchRequest] {
        var requests: [BatchRequest] = []
        var seen = Set<String>()
        var models = Set<String>()
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
        for (index, line) in lines.enumerated() where !line.allSatisfy(\.isWhitespace) {
            let object = try BatchHTTP.object(Data(line.utf8), what: "line \(index + 1)")
            guard let customID = object["custom_id"] as? String, seen.insert(customID).inserted else {
                throw SimAPIError(
                    .invalidRequest, "line \(index + 1): custom_id missing or used more than once")
            }
            guard object["method"] as? String == "POST", object["url"] as? String == endpoint else {
                throw SimAPIError(
                    .invalidRequest, "line \(index + 1): expected method POST and url \(endpoint)")
            }
            guard let body = object["body"] as? [String: Any] else {
                throw SimAPIError(.invalidRequest, "line \(index + 1): body: expected a JSON object")
            }
            models.insert(body["model"] as? String ?? "")
            requests.append(BatchRequest(customID: customID, body: BatchHTTP.encode(body)))
        }
        guard !requests.isEmpty else {
            throw SimAPIError(.invalidRequest, "the input file holds no requests")
        }
        guard models.count == 1 else {
            throw SimAPIError(
                .invalidRequest,
                "the input file uses more than one model (\(models.sorted().joined(separator: ", "))); "
                    + "a batch's requests must all use the same model")
        }
        return requests
    }

    private func list(_ request: Request) throws -> Response {
        let (ids, hasMore) = state.batches.page(
            api: .openAI, limit: try BatchHTTP.limit(request),
            afterID: request.uri.queryParameters.get("after"),
            beforeID: nil)
        let data = ids.compactMap { http.runner.current($0) }.map(object)
        return http.json([
            "object": "list", "data": data, "has_more": hasMore, "first_id": ids.first ?? NSNull(),
            "last_id": ids.last ?? NSNull(),
        ])
    }

    /// The `batch` object as the API documents it.
    private func object(_ job: BatchJob) -> [String: Any] {
        let counts = job.counts
        let cancelled = job.cancelInitiatedAt != nil
        let status: String
        switch job.phase {
        case .inProgress: status = "in_progress"
        case .canceling: status = "cancelling"
        case .ended: status = cancelled ? "cancelled" : "completed"
        case .failed: status = "failed"
        }
        func time(_ date: Date?) -> Any { date.map { Int($0.timeIntervalSince1970) } ?? NSNull() }
        let ended = job.phase == .ended
        let hasOutput = ended && counts.succeeded > 0
        let hasErrors = ended && counts.errored + counts.expired + counts.canceled > 0
        return [
            "id": job.id, "object": "batch", "endpoint": job.endpoint, "completion_window": "24h",
            "input_file_id": job.inputFileID ?? NSNull(), "status": status,
            "errors": job.failure.map { message in
                [
                    "object": "list",
                    "data": [
                        ["code": "invalid_input", "message": message, "param": NSNull(), "line": NSNull()]
                    ],
                ]
                    as Any
            } ?? NSNull(),
            "output_file_id": hasOutput ? OpenAIBatchFiles.outputID(job.id) as Any : NSNull(),
            "error_file_id": hasErrors ? OpenAIBatchFiles.errorID(job.id) as Any : NSNull(),
            "created_at": Int(job.createdAt.timeIntervalSince1970),
            "in_progress_at": job.phase == .failed ? NSNull() : time(job.createdAt),
            "expires_at": Int(job.createdAt.timeIntervalSince1970) + 24 * 3600,
            "finalizing_at": ended ? time(job.endedAt) : NSNull(),
            "completed_at": ended && !cancelled ? time(job.endedAt) : NSNull(),
            "failed_at": job.phase == .failed ? time(job.endedAt) : NSNull(),
            "expired_at": NSNull(),
            "cancelling_at": time(job.cancelInitiatedAt),
            "cancelled_at": ended && cancelled ? time(job.endedAt) : NSNull(),
            "request_counts": [
                "total": job.requests.count, "completed": counts.succeeded,
                "failed": counts.errored + counts.expired + counts.canceled,
            ],
            "metadata": job.metadata ?? NSNull(),
        ]
    }
}
