import Foundation
import Hummingbird

/// One API call's way through the sim: count it, read the body, check the key, apply a fault,
/// answer, bill, wait out the latency model, and send.
struct CompletionPipeline: Sendable {
    /// Large enough for any document a test sends; a real API's limit is similar (32 MB).
    static let maxBodyBytes = 32 * 1024 * 1024

    let state: SimState

    func respond(to request: Request, api: some CompletionAPI) async -> Response {
        state.stats.recordCall(api.endpoint)
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: Self.maxBodyBytes)
        } catch {
            return api.errorResponse(
                SimAPIError(.tooLarge, "request body is larger than 32 MiB or was cut off"))
        }
        if let key = state.options.requireKey, api.presentedKey(in: request.headers) != key {
            return api.errorResponse(SimAPIError(.authentication, "invalid API key"))
        }
        let fault: SimFault?
        do {
            fault = try state.faults.faultForNextCall(header: request.headers.value(named: "x-sim-fault"))
        } catch {
            return api.errorResponse(SimAPIError(.invalidRequest, "x-sim-fault: \(error)"))
        }
        if let fault {
            state.stats.recordFault(fault)
            if let status = fault.echoStatus {
                return api.errorResponse(
                    FaultResponses.echo(
                        status: status, headers: request.headers, body: body,
                        retryAfter: state.options.retryAfterSeconds))
            }
            if let response = immediateResponse(to: fault, api: api) { return response }
            if fault == .timeout { await pause(milliseconds: state.options.timeoutDelaySeconds * 1000) }
        }
        let call: ParsedCall
        do {
            call = try api.parse(Data(body.readableBytesView))
        } catch let error as SimAPIError {
            return api.errorResponse(error)
        } catch {
            return api.errorResponse(SimAPIError(.invalidRequest, "invalid request: \(error)"))
        }
        return await answer(call, api: api, truncated: fault == .truncate)
    }

    /// The call's answer, cut to its `max_tokens`; for a batched prompt, also what it adds to
    /// the batch counters. A batched answer is damaged before the cut, as a model would write
    /// the damage, and billed for its whole (damaged) text.
    private func compose(_ call: ParsedCall) -> (SimAnswer, BatchTally?) {
        let composer = state.composer
        let text = call.conversation.lastUserText
        let items = BatchItem.items(in: text)
        guard !items.isEmpty else {
            return (composer.cut(composer.singleAnswer(to: text), maxTokens: call.maxTokens), nil)
        }
        let (damaged, damage) = state.damager.damage(composer.batchAnswer(for: items))
        let answer = composer.cut(damaged.text, maxTokens: call.maxTokens)
        return (answer, BatchTally(items: items.count, damage: damage))
    }

    private func answer(_ call: ParsedCall, api: some CompletionAPI, truncated: Bool) async -> Response {
        let (answer, batch) = compose(call)
        let billing = state.cacheBook.bill(
            api: api.cacheAPI, model: call.model, inputTokens: call.conversation.inputTokens,
            prefix: api.cacheablePrefix(of: call.conversation))
        let options = state.options
        await pause(milliseconds: options.latencyMs + options.msPerOutputToken * Double(answer.outputTokens))
        let json = api.answerBody(for: call, answer: answer, billing: billing)
        if truncated { return FaultResponses.truncated(json) }

        let billed = BilledTokens(billing, outputTokens: answer.outputTokens)
        let stats = state.stats
        let endpoint = api.endpoint
        stats.recordAnswer(endpoint, billed: billed, batch: batch)
        // Billed before sending so a client that reads /sim/stats right after its answer sees
        // it; taken back if the connection is gone by the time the answer is written.
        let body = ResponseBody(contentLength: json.readableBytes) { writer in
            do {
                try await writer.write(json)
                try await writer.finish(nil)
            } catch {
                stats.revokeAnswer(endpoint, billed: billed, batch: batch)
                throw error
            }
        }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: body)
    }

    /// The answer of a fault that replaces the call's answer; nil for faults that delay or
    /// damage the normal answer instead.
    private func immediateResponse(to fault: SimFault, api: some CompletionAPI) -> Response? {
        switch fault {
        case .rateLimited:
            return api.errorResponse(
                SimAPIError(
                    .rateLimited, "offpeak-sim: simulated rate limit (fault 429)",
                    retryAfter: state.options.retryAfterSeconds))
        case .serverError:
            return api.errorResponse(
                SimAPIError(.server, "offpeak-sim: simulated internal error (fault 500)"))
        case .overloaded:
            return api.errorResponse(SimAPIError(.overloaded, "offpeak-sim: simulated overload (fault 529)"))
        case .nonJSON:
            return FaultResponses.badGatewayPage()
        case .badRequest:
            return api.errorResponse(
                SimAPIError(.invalidRequest, "offpeak-sim: simulated refusal of this request (fault 400)"))
        case .timeout, .truncate, .echoBadRequest, .echoRateLimited, .echoServerError, .echoBadGateway,
            .echoOverloaded:
            return nil
        }
    }

    private func pause(milliseconds: Double) async {
        await state.shutdown.pause(milliseconds: milliseconds)
    }
}
