import Foundation
import Hummingbird

/// Anthropic's Message Batches API: create, retrieve, list, cancel and results (JSONL) under
/// `/v1/messages/batches`, as the official SDK calls them.
struct AnthropicBatchRoutes: Sendable {
    static let maxRequests = 100_000

    let state: SimState
    private var http: BatchHTTP { BatchHTTP(state: state, api: AnthropicRoutes()) }

    func register(on router: Router<some RequestContext>) {
        let http = http
        router.post("/v1/messages/batches") { request, _ in
            await http.serveCreate(request) { body in try create(body, request: request) }
        }
        router.get("/v1/messages/batches") { request, _ in
            await http.serve(request) { _ in try list(request) }
        }
        router.get("/v1/messages/batches/:id") { request, context in
            await http.serve(request) { _ in try view(try found(context), request: request) }
        }
        router.post("/v1/messages/batches/:id/cancel") { request, context in
            await http.serve(request) { _ in
                let job = try state.batches.cancel(try found(context).id) ?? found(context)
                return http.json(object(job, request: request))
            }
        }
        router.get("/v1/messages/batches/:id/results") { request, context in
            if let refused = http.refusedDownload() { return refused }
            return await http.serve(request) { _ in try results(try found(context)) }
        }
    }

    private func found(_ context: some RequestContext) throws -> BatchJob {
        let id = context.parameters.get("id") ?? ""
        guard let job = state.batches.job(id), job.api == .anthropic else {
            throw BatchHTTP.notFound("message batch", id)
        }
        return job
    }

    private func create(_ body: Data, request: Request) throws -> Response {
        let object = try BatchHTTP.object(body, what: "body")
        guard let items = object["requests"] as? [[String: Any]], !items.isEmpty else {
            throw SimAPIError(.invalidRequest, "requests: expected a non-empty array of objects")
        }
        guard items.count <= Self.maxRequests else {
            throw SimAPIError(.invalidRequest, "requests: at most \(Self.maxRequests) requests per batch")
        }
        var seen = Set<String>()
        var requests: [BatchRequest] = []
        for (index, item) in items.enumerated() {
            guard let customID = item["custom_id"] as? String, Self.isValid(customID) else {
                throw SimAPIError(
                    .invalidRequest,
                    "requests.\(index).custom_id: expected 1-64 characters of a-z, A-Z, 0-9, _ or -")
            }
            guard seen.insert(customID).inserted else {
                throw SimAPIError(
                    .invalidRequest, "requests.\(index).custom_id: \(customID) is used more than once")
            }
            guard let params = item["params"] as? [String: Any] else {
                throw SimAPIError(.invalidRequest, "requests.\(index).params: field required")
            }
            requests.append(BatchRequest(customID: customID, body: BatchHTTP.encode(params)))
        }
        let job = BatchJob(
            id: "msgbatch_sim" + randomHex(), api: .anthropic, createdAt: Date(), requests: requests)
        state.batches.add(job)
        state.stats.recordBatchCreated()
        return http.json(self.object(job, request: request))
    }

    static func isValid(_ customID: String) -> Bool {
        (1...64).contains(customID.utf8.count)
            && customID.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-")
            }
    }

    private func view(_ job: BatchJob, request: Request) throws -> Response {
        http.json(object(http.runner.current(job.id) ?? job, request: request))
    }

    private func list(_ request: Request) throws -> Response {
        let query = request.uri.queryParameters
        let (ids, hasMore) = state.batches.page(
            api: .anthropic, limit: try BatchHTTP.limit(request), afterID: query.get("after_id"),
            beforeID: query.get("before_id"))
        let data = ids.compactMap { http.runner.current($0) }.map { object($0, request: request) }
        return http.json([
            "data": data, "has_more": hasMore, "first_id": ids.first ?? NSNull(),
            "last_id": ids.last ?? NSNull(),
        ])
    }

    private func results(_ job: BatchJob) throws -> Response {
        guard let job = http.runner.current(job.id), job.phase == .ended else {
            throw SimAPIError(
                .invalidRequest, "message batch \(job.id) has not ended; its results are not ready")
        }
        var lines = Data()
        for (customID, outcome) in job.results {
            let result: [String: Any]
            switch outcome {
            case .succeeded(let message):
                result = [
                    "type": "succeeded", "message": (try? JSONSerialization.jsonObject(with: message)) ?? [:],
                ]
            case .errored(let error):
                let (_, type) = error.anthropic
                result = [
                    "type": "errored",
                    "error": ["type": "error", "error": ["type": type, "message": error.message]],
                ]
            case .expired: result = ["type": "expired"]
            case .canceled: result = ["type": "canceled"]
            }
            lines.append(BatchHTTP.encode(["custom_id": customID, "result": result]))
            lines.append(UInt8(ascii: "\n"))
        }
        return Response(
            status: .ok, headers: [.contentType: "application/binary"],
            body: .init(byteBuffer: ByteBuffer(bytes: lines)))
    }

    /// The `message_batch` object; `results_url` is absolute, as the SDK downloads from it, unless
    /// `--relative-results-url` makes it a path or `--results-origin` names another origin.
    private func object(_ job: BatchJob, request: Request) -> [String: Any] {
        let counts = job.counts
        let status: String
        switch job.phase {
        case .inProgress: status = "in_progress"
        case .canceling: status = "canceling"
        case .ended, .failed: status = "ended"
        }
        let options = state.options
        let host = request.head.authority ?? "\(options.host):\(options.port)"
        let origin = options.relativeResultsURL ? "" : options.resultsOrigin ?? "http://\(host)"
        return [
            "id": job.id, "type": "message_batch", "processing_status": status,
            "request_counts": [
                "processing": counts.processing, "succeeded": counts.succeeded, "errored": counts.errored,
                "canceled": counts.canceled, "expired": counts.expired,
            ],
            "created_at": Self.timestamp(job.createdAt),
            "expires_at": Self.timestamp(job.createdAt + 24 * 3600),
            "ended_at": job.endedAt.map(Self.timestamp) ?? NSNull(),
            "cancel_initiated_at": job.cancelInitiatedAt.map(Self.timestamp) ?? NSNull(),
            "archived_at": NSNull(),
            "results_url": job.phase == .ended
                ? "\(origin)\(options.pathPrefix)/v1/messages/batches/\(job.id)/results" as Any : NSNull(),
        ]
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
