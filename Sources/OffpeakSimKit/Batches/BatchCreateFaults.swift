import Foundation
import Hummingbird

/// Faults for the calls that create a batch, so a client's handling of a create that may or may
/// not have happened can be tested: the call's `x-sim-fault` header or the next fault queued by
/// `POST /sim/faults` (no random draw). Error faults refuse the call and create nothing;
/// `timeout` creates the batch and answers only after `--timeout-delay`, and `truncate` creates
/// it and cuts the answer off, as a real server that acted on the call but whose answer was lost.
extension BatchHTTP {
    func serveCreate(_ request: Request, _ create: (Data) throws -> Response) async -> Response {
        let fault: SimFault?
        do {
            fault = try state.faults.faultForBatchCreate(header: request.headers.value(named: "x-sim-fault"))
        } catch {
            return api.errorResponse(SimAPIError(.invalidRequest, "x-sim-fault: \(error)"))
        }
        guard let fault else { return await serve(request, create) }
        state.stats.recordFault(fault)
        switch fault {
        case .timeout:
            let response = await serve(request, create)
            await state.shutdown.pause(milliseconds: state.options.timeoutDelaySeconds * 1000)
            return response
        case .truncate:
            let response = await serve(request, create)
            guard response.status == .ok else { return response }
            return FaultResponses.truncated(ByteBuffer(string: #"{"id": "created but cut off"}"#))
        case .rateLimited, .serverError, .overloaded, .nonJSON, .badRequest, .quotaSpent:
            return fault.immediateResponse(
                api: api, retryAfter: state.options.retryAfterSeconds,
                overloadedRetryAfter: state.options.overloadedRetryAfterSeconds)
                ?? api.errorResponse(SimAPIError(.server, "offpeak-sim: fault \(fault) has no answer"))
        case .echoBadRequest, .echoRateLimited, .echoServerError, .echoBadGateway, .echoOverloaded:
            var request = request
            let body = (try? await request.collectBody(upTo: Self.maxBodyBytes)) ?? ByteBuffer()
            return api.errorResponse(
                FaultResponses.echo(
                    status: fault.echoStatus ?? 500, headers: request.headers, body: body,
                    retryAfter: state.options.retryAfterSeconds))
        }
    }
}
