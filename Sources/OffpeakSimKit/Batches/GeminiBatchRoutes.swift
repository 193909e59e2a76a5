import Foundation
import Hummingbird

/// Gemini's Batch Mode with inlined requests: `POST /v1beta/models/{model}:batchGenerateContent`
/// creates a batch (an operation named `batches/{id}`), `GET /v1beta/batches/{id}` retrieves it
/// (its inlined responses once it ended, in the order of the requests, without their `metadata`,
/// as Google's API answers today), `GET /v1beta/batches` lists them newest first, and
/// `POST /v1beta/batches/{id}:cancel` cancels.
struct GeminiBatchRoutes: Sendable {
    /// Inlined requests may total 20 MB.
    static let maxBodyBytes = 20 * 1024 * 1024

    let state: SimState

    private func http(_ api: GeminiRoutes) -> BatchHTTP { BatchHTTP(state: state, api: api) }

    func register(on router: Router<some RequestContext>) {
        router.get("/v1beta/batches") { request, _ in
            let http = http(GeminiRoutes(model: "", queryKey: request.uri.queryParameters.get("key")))
            return await http.serve(request) { _ in try list(request, http: http) }
        }
        router.get("/v1beta/batches/:id") { request, context in
            let http = http(GeminiRoutes(model: "", queryKey: request.uri.queryParameters.get("key")))
            return await http.serve(request) { _ in
                let job = try found(context.parameters.get("id") ?? "")
                return http.json(operation(http.runner.current(job.id) ?? job))
            }
        }
        router.post("/v1beta/batches/:id") { request, context in
            let http = http(GeminiRoutes(model: "", queryKey: request.uri.queryParameters.get("key")))
            return await http.serve(request) { _ in
                // One path segment, `{id}:cancel`, under the same parameter as a retrieve's.
                let call = context.parameters.get("id") ?? ""
                guard call.hasSuffix(":cancel") else {
                    throw SimAPIError(.notFound, "Method not found: \(call)")
                }
                state.batches.cancel(try found(String(call.dropLast(":cancel".count))).id)
                return http.json([:])
            }
        }
    }

    private func found(_ id: String) throws -> BatchJob {
        let name = "batches/" + id
        guard let job = state.batches.job(name), job.api == .gemini else {
            throw SimAPIError(.notFound, "Batch \(name) not found")
        }
        return job
    }

    func create(_ request: Request, api: GeminiRoutes) async -> Response {
        let http = http(api)
        return await http.serve(request) { body in
            let object = try BatchHTTP.object(body, what: "body")
            let batch = object["batch"] as? [String: Any] ?? [:]
            let input = (batch["inputConfig"] ?? batch["input_config"]) as? [String: Any]
            let holder = input?["requests"] as? [String: Any]
            guard let items = holder?["requests"] as? [[String: Any]], !items.isEmpty else {
                throw SimAPIError(
                    .invalidRequest, "* BatchGenerateContentRequest.batch.input_config: requests are required"
                )
            }
            guard let name = (batch["displayName"] ?? batch["display_name"]) as? String, !name.isEmpty else {
                throw SimAPIError(
                    .invalidRequest,
                    "* BatchGenerateContentRequest.batch.display_name: display_name is required")
            }
            var requests: [BatchRequest] = []
            for (index, item) in items.enumerated() {
                guard let body = item["request"] as? [String: Any] else {
                    throw SimAPIError(
                        .invalidRequest,
                        "* BatchGenerateContentRequest.batch.input_config.requests[\(index)]: "
                            + "request is required")
                }
                let key = (item["metadata"] as? [String: Any])?["key"] as? String ?? "\(index)"
                requests.append(BatchRequest(customID: key, body: BatchHTTP.encode(body)))
            }
            var job = BatchJob(
                id: "batches/sim" + randomHex(), api: .gemini, createdAt: Date(), requests: requests)
            job.model = api.model
            job.displayName = name
            state.batches.add(job)
            state.stats.recordBatchCreated()
            return http.json(operation(job))
        }
    }

    private func list(_ request: Request, http: BatchHTTP) throws -> Response {
        let query = request.uri.queryParameters
        let size = Int(query.get("pageSize") ?? "") ?? 50
        let (ids, hasMore) = state.batches.page(
            api: .gemini, limit: max(1, min(size, 1000)), afterID: query.get("pageToken"), beforeID: nil)
        var page: [String: Any] = [
            "operations": ids.compactMap { http.runner.current($0) }.map { operation($0) }
        ]
        if hasMore, let last = ids.last { page["nextPageToken"] = last }
        return http.json(page)
    }

    /// The batch as an operation: its `metadata` is the batch; once it ended, `done` and the
    /// inlined responses in `response` (and in `metadata.output`).
    private func operation(_ job: BatchJob) -> [String: Any] {
        let state: String
        switch job.phase {
        case .inProgress, .canceling: state = "BATCH_STATE_RUNNING"
        case .failed: state = "BATCH_STATE_FAILED"
        case .ended:
            state =
                job.results.allSatisfy { $0.outcome == .canceled }
                ? "BATCH_STATE_CANCELLED" : "BATCH_STATE_SUCCEEDED"
        }
        let counts = job.counts
        var batch: [String: Any] = [
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
            "name": job.id, "model": "models/" + (job.model ?? ""), "displayName": job.displayName ?? "",
            "createTime": AnthropicBatchRoutes.timestamp(job.createdAt),
            "updateTime": AnthropicBatchRoutes.timestamp(job.endedAt ?? job.createdAt), "state": state,
            "batchStats": [
                "requestCount": String(job.requests.count), "pendingRequestCount": String(counts.processing),
                "successfulRequestCount": String(counts.succeeded),
                "failedRequestCount": String(counts.errored + counts.expired + counts.canceled),
            ],
        ]
        var operation: [String: Any] = ["name": job.id]
        if job.phase == .ended {
            let output: [String: Any] = [
                "inlinedResponses": ["inlinedResponses": job.results.map(Self.response)]
            ]
            batch["output"] = output
            batch["endTime"] = AnthropicBatchRoutes.timestamp(job.endedAt ?? job.createdAt)
            operation["done"] = true
            operation["response"] = output.merging(
                [
                    "@type":
                        "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput"
                ]
            ) { first, _ in first }
        }
        operation["metadata"] = batch
        return operation
    }

    /// One inlined response: the answer, or the error (an expired or canceled request is an
    /// error of its own status).
    private static func response(_ result: (customID: String, outcome: BatchOutcome)) -> [String: Any] {
        func error(_ code: Int, _ status: String, _ message: String) -> [String: Any] {
            ["error": ["code": code, "status": status, "message": message]]
        }
        switch result.outcome {
        case .succeeded(let body): return ["response": (try? JSONSerialization.jsonObject(with: body)) ?? [:]]
        case .errored(let failure):
            let (status, name) = failure.gemini
            return error(status, name, failure.message)
        case .expired: return error(504, "DEADLINE_EXCEEDED", "the batch expired before this request ran")
        case .canceled: return error(499, "CANCELLED", "the batch was cancelled before this request ran")
        }
    }
}
