import Foundation
import Hummingbird

/// The `/sim/*` endpoints tests and benchmarks use to steer and read the sim. They are not API
/// calls: they are never counted, faulted or keyed.
struct ControlRoutes: Sendable {
    let state: SimState

    private struct FaultQueue: Codable {
        var next: [String]
    }

    private struct ResetAnswer: Encodable {
        var reset = true
    }

    func register(on router: Router<some RequestContext>) {
        router.get("/sim/health") { _, _ in "ok" }
        router.get("/sim/stats") { _, _ in json(state.stats.snapshot()) }
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
            await enqueue(request)
        }
    }

    /// `POST /sim/faults` with `{"next": ["429", "truncate"]}`: all names are checked before
    /// any is queued, so a typo queues nothing.
    private func enqueue(_ request: Request) async -> Response {
        var request = request
        do {
            let body = try await request.collectBody(upTo: 1024 * 1024)
            let queue = try JSONBody.decode(FaultQueue.self, from: Data(body.readableBytesView))
            state.faults.enqueue(try queue.next.map { try SimFault(name: $0) })
            return queueAnswer()
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
