import Foundation
import Hummingbird

/// OpenAI's Files API as batches use it: upload a JSONL input (`purpose=batch`), read a file's
/// object and its content, including the output and error files a batch writes when it ends.
/// Mistral's files API is the same under `/mistral/v1` (`mistral`), its file object naming the
/// file's `sample_type` and `source` too.
struct OpenAIFileRoutes: Sendable {
    let state: SimState
    var mistral = false
    private var http: BatchHTTP {
        BatchHTTP(state: state, api: mistral ? MistralRoutes() as any CompletionAPI : OpenAIRoutes())
    }

    func register(on router: Router<some RequestContext>) {
        let http = http
        let files = (mistral ? MistralBatchRoutes.prefix : "") + "/v1/files"
        router.post(RouterPath(files)) { request, _ in
            await http.serve(request) { body in try upload(body, contentType: request.headers[.contentType]) }
        }
        router.get(RouterPath(files + "/:id")) { request, context in
            await http.serve(request) { _ in http.json(object(try found(context))) }
        }
        router.get(RouterPath(files + "/:id/content")) { request, context in
            if let refused = http.refusedDownload() { return refused }
            return await http.serve(request) { _ in
                Response(
                    status: .ok, headers: [.contentType: "application/octet-stream"],
                    body: .init(byteBuffer: ByteBuffer(bytes: try found(context).data)))
            }
        }
    }

    private func upload(_ body: Data, contentType: String?) throws -> Response {
        let form = try MultipartForm(body: body, contentType: contentType)
        guard let purpose = form.part("purpose").map({ String(decoding: $0.data, as: UTF8.self) }) else {
            throw SimAPIError(.invalidRequest, "purpose: field required")
        }
        guard purpose == "batch" else {
            throw SimAPIError(.invalidRequest, "purpose: offpeak-sim accepts only \"batch\", got \(purpose)")
        }
        guard let file = form.part("file") else { throw SimAPIError(.invalidRequest, "file: field required") }
        let stored = BatchFile(
            id: "file-sim" + randomHex(), filename: file.filename ?? "upload.jsonl", purpose: purpose,
            createdAt: Date(), data: file.data)
        state.batches.addFile(stored)
        return http.json(object(stored))
    }

    /// An uploaded file, or the output or error file of an ended batch.
    private func found(_ context: some RequestContext) throws -> BatchFile {
        let id = context.parameters.get("id") ?? ""
        if let file = state.batches.file(id) { return file }
        if let file = OpenAIBatchFiles(state: state).file(id) { return file }
        throw BatchHTTP.notFound("file", id)
    }

    func object(_ file: BatchFile) -> [String: Any] {
        var object: [String: Any] = [
            "id": file.id, "object": "file", "bytes": file.data.count,
            "created_at": Int(file.createdAt.timeIntervalSince1970),
            "filename": file.filename, "purpose": file.purpose,
        ]
        if mistral {
            // Mistral's purpose is `batch` for every file of a batch; what each holds is its sample type.
            object["purpose"] = "batch"
            object["sample_type"] =
                file.purpose == "batch_output"
                ? "batch_result" : file.purpose == "batch_error" ? "batch_error" : "batch_request"
            object["source"] = file.purpose == "batch" ? "upload" : "mistral"
            object["num_lines"] = file.data.split(separator: UInt8(ascii: "\n")).count
        } else {
            object["status"] = "processed"
        }
        return object
    }
}

/// The output and error files of ended OpenAI batches, written from the batch's results when
/// asked for, so downloading twice gives the same bytes.
struct OpenAIBatchFiles: Sendable {
    let state: SimState

    static func outputID(_ batchID: String) -> String { "file-output-" + batchID }
    static func errorID(_ batchID: String) -> String { "file-errors-" + batchID }

    func file(_ id: String) -> BatchFile? {
        for (prefix, errors) in [("file-output-", false), ("file-errors-", true)] where id.hasPrefix(prefix) {
            let batchID = String(id.dropFirst(prefix.count))
            guard let job = BatchRunner(state: state).current(batchID),
                [.openAI, .mistral].contains(job.api),
                job.phase == .ended,
                let endedAt = job.endedAt
            else { return nil }
            let name = errors ? "batch_\(batchID)_error.jsonl" : "batch_\(batchID)_output.jsonl"
            return BatchFile(
                id: id, filename: name, purpose: errors ? "batch_error" : "batch_output", createdAt: endedAt,
                data: lines(job, errors: errors))
        }
        return nil
    }

    private func lines(_ job: BatchJob, errors: Bool) -> Data {
        var data = Data()
        for (customID, outcome) in job.results {
            let tag = String(stableHash(job.id + "/" + customID), radix: 16)
            var line: [String: Any] = [
                "id": "batch_req_" + tag, "custom_id": customID, "response": NSNull(), "error": NSNull(),
            ]
            switch (outcome, errors) {
            case (.succeeded(let body), false):
                line["response"] = [
                    "status_code": 200, "request_id": "req_" + tag,
                    "body": (try? JSONSerialization.jsonObject(with: body)) ?? [:],
                ]
            case (.errored(let error), true):
                let (status, type, code) = error.openAI
                line["response"] = [
                    "status_code": status, "request_id": "req_" + tag,
                    "body": [
                        "error": [
                            "message": error.message, "type": type, "param": NSNull(),
                            "code": code.map { $0 as Any } ?? NSNull(),
                        ]
                    ],
                ]
            case (.expired, true):
                line["error"] = [
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion window expired.",
                ]
            case (.canceled, true):
                line["error"] = [
                    "code": "batch_cancelled", "message": "This request was cancelled with its batch.",
                ]
            default: continue
            }
            data.append(BatchHTTP.encode(line))
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }
}
