import Foundation
import Hummingbird

/// The `/sim/*` endpoints tests and benchmarks use to steer and read the sim. They are not API
/// calls: they are never counted, faulted or keyed.
struct ControlRoutes: Sendable {
    let state: SimState

    private struct FaultQueue: Codable {
        var next: [String]
    }

    /// `GET /sim/stats`: the billing, load and provider-batch counters side by side, flat.
    private struct StatsAnswer: Encodable {
        var billing: StatsSnapshot
        var load: LoadSnapshot
        var batches: ProviderBatchStats

        func encode(to encoder: any Encoder) throws {
            try billing.encode(to: encoder)
            try load.encode(to: encoder)
            try batches.encode(to: encoder)
        }
    }

    private struct ResetAnswer: Encodable {
        var reset = true
    }

    private struct ResultsStatus: Codable {
        var status: Int?
    }

    private struct ExpectedQuestion: Decodable {
        var texts: [String]
    }

    private struct ExpectedAnswer: Encodable {
        var answers: [String]
    }

    func register(on router: Router<some RequestContext>) {
        router.get("/sim/health") { _, _ in "ok" }
        router.get("/sim/stats") { _, _ in
            json(
                StatsAnswer(
                    billing: state.stats.snapshot(), load: state.load.snapshot(),
                    batches: state.stats.batchSnapshot()))
        }
        router.post("/sim/reset") { _, _ in
            state.reset()
            return json(ResetAnswer())
        }
        router.get("/sim/faults") { _, _ in queueAnswer() }
        router.delete("/sim/faults") { _, _ in
            state.faults.clearQueue()
            return queueAnswer()
        }
        router.post("/sim/faults") { request, _ in
            await handle(request, upTo: 1024 * 1024) { body in try enqueue(body) }
        }
        router.post("/sim/batch-faults") { request, _ in
            await handle(request, upTo: 16 * 1024 * 1024) { body in try targetBatchFaults(body) }
        }
        router.post("/sim/results-status") { request, _ in
            await handle(request, upTo: 1024) { body in try refuseDownloads(body) }
        }
        router.post("/sim/expected") { request, _ in
            await handle(request, upTo: CompletionPipeline.maxBodyBytes) { body in try expected(body) }
        }
    }

    /// `POST /sim/faults` with `{"next": ["429", "truncate"]}`: all names are checked before
    /// any is queued, so a typo queues nothing.
    private func enqueue(_ body: Data) throws -> Response {
        let queue = try JSONBody.decode(FaultQueue.self, from: body)
        state.faults.enqueue(try queue.next.map { try SimFault(name: $0) })
        return queueAnswer()
    }

    /// `POST /sim/batch-faults` with `{"errored": [ids], "expired": [...], "canceled": [...]}`:
    /// provider-batch requests with these `custom_id`s end so in every batch that ends later.
    private func targetBatchFaults(_ body: Data) throws -> Response {
        let targets = try JSONBody.decode([String: [String]].self, from: body)
        var kinds: [(BatchFaultKind, [String])] = []
        for (name, ids) in targets {
            guard let kind = BatchFaultKind(rawValue: name) else {
                throw SimAPIError(.invalidRequest, "\(name): expected errored, expired or canceled")
            }
            kinds.append((kind, ids))
        }
        for (kind, ids) in kinds { state.batches.target(ids, kind) }
        return json(targets)
    }

    /// `POST /sim/results-status` with `{"status": 404}`: every results download answers that
    /// status from now on; `{"status": null}` serves them again.
    private func refuseDownloads(_ body: Data) throws -> Response {
        let asked = try JSONBody.decode(ResultsStatus.self, from: body)
        if let status = asked.status, !(400...599).contains(status) {
            throw SimAPIError(.invalidRequest, "status: expected 400-599 or null, got \(status)")
        }
        state.batches.refuseDownloads(asked.status)
        return json(asked)
    }

    /// `POST /sim/expected` with `{"texts": [...]}`: the answer each text gets when sent alone
    /// as the last user message, without damage or a `max_tokens` cut, so a benchmark can check
    /// every item of a batched run against the answer it should have had.
    private func expected(_ body: Data) throws -> Response {
        let question = try JSONBody.decode(ExpectedQuestion.self, from: body)
        return json(ExpectedAnswer(answers: question.texts.map { state.composer.fullAnswer(to: $0) }))
    }

    /// Reads a control request's body and answers with `respond`, or with a 400 saying what is
    /// wrong with the body.
    private func handle(
        _ request: Request, upTo limit: Int, _ respond: (Data) throws -> Response
    ) async -> Response {
        var request = request
        do {
            let body = try await request.collectBody(upTo: limit)
            return try respond(Data(body.readableBytesView))
        } catch let error as SimAPIError {
            return error.neutralResponse(status: 400)
        } catch {
            return SimAPIError(.invalidRequest, "\(error)").neutralResponse(status: 400)
        }
    }

    private func queueAnswer() -> Response {
        json(FaultQueue(next: state.faults.pending.map(\.rawValue)))
    }

    private func json(_ value: some Encodable) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: JSONBody.encode(value)))
    }
}
