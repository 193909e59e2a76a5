import Foundation
import Hummingbird

/// One API call's way through the sim: count it, read the body, check the key, parse it, pass
/// the rate limiter, apply a fault, answer, bill, wait out the latency model, and send with the
/// endpoint's rate-limit headers.
struct CompletionPipeline: Sendable {
    /// Large enough for any document a test sends; a real API's limit is similar (32 MB).
    static let maxBodyBytes = 32 * 1024 * 1024

    let state: SimState

    private var gate: RateLimitGate { RateLimitGate(state: state) }

    func respond(to request: Request, api: some CompletionAPI) async -> Response {
        let arrived = state.stats.recordCall(api.endpoint)
        if let last = state.options.crashAfterCalls, arrived > last {
            // `_exit`, not `exit`: no handler runs and nothing is flushed, as when a process dies.
            _exit(137)
        }
        let load = state.load
        load.enter()
        defer { load.leave() }
        var (response, admitted) = await serve(request, api: api)
        gate.addHeaders(to: &response, api: api, report: admitted)
        return response
    }

    /// The call's response, and the limits as they stood when it was admitted (nil if it was not).
    private func serve(_ request: Request, api: some CompletionAPI) async -> (Response, RateLimitReport?) {
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: Self.maxBodyBytes)
        } catch {
            return (
                api.errorResponse(
                    SimAPIError(.tooLarge, "request body is larger than 32 MiB or was cut off")),
                nil
            )
        }
        if let key = state.options.requireKey, api.presentedKey(in: request.headers) != key {
            return (api.errorResponse(SimAPIError(.authentication, "invalid API key")), nil)
        }
        var parsed: Result<ParsedCall, SimAPIError>
        do {
            let call = try api.parse(Data(body.readableBytesView))
            parsed = state.refusal(of: call).map { .failure($0) } ?? .success(call)
        } catch let error as SimAPIError {
            parsed = .failure(error)
        } catch {
            parsed = .failure(SimAPIError(.invalidRequest, "invalid request: \(error)"))
        }
        // The limiter stands at the front door: a refused call never reaches the fault
        // injector (it takes no fault draw) nor the model. A call that cannot be parsed is not
        // counted against the limits.
        // A flex call refused for capacity is turned away before the limiter: not billed, and not
        // counted against the limits.
        if case .success(var call) = parsed, call.flex {
            let refused = state.flex.refuses()
            call.flexAsDefault = !refused && state.flex.answersAsDefault()
            state.stats.recordFlex(refused: refused, asDefault: call.flexAsDefault)
            if refused {
                return (api.errorResponse(SimAPIError(.resourceUnavailable, FlexGate.refusal)), nil)
            }
            parsed = .success(call)
        }
        var ticket: RateTicket?
        var report: RateLimitReport?
        if gate.isActive, case .success(let call) = parsed {
            switch gate.admit(call, api: api) {
            case .success(let admitted):
                ticket = admitted
                report = gate.report(api: api)
            case .failure(let refusal): return (api.errorResponse(refusal), nil)
            }
        }
        let (response, outputTokens) = await faultOrAnswer(
            request: request, body: body, parsed: parsed, api: api)
        if let ticket { gate.settle(ticket, outputTokens: outputTokens) }
        return (response, report)
    }

    /// The call's fault or answer, and the output tokens it produced (0 without an answer).
    private func faultOrAnswer(
        request: Request, body: ByteBuffer, parsed: Result<ParsedCall, SimAPIError>, api: some CompletionAPI
    ) async -> (Response, Int) {
        let fault: SimFault?
        do {
            fault = try state.faults.faultForNextCall(header: request.headers.value(named: "x-sim-fault"))
        } catch {
            return (api.errorResponse(SimAPIError(.invalidRequest, "x-sim-fault: \(error)")), 0)
        }
        if let fault {
            state.stats.recordFault(fault)
            if let status = fault.echoStatus {
                let echo = FaultResponses.echo(
                    status: status, headers: request.headers, body: body,
                    retryAfter: state.options.retryAfterSeconds)
                return (api.errorResponse(echo), 0)
            }
            if let response = fault.immediateResponse(
                api: api, retryAfter: state.options.retryAfterSeconds,
                overloadedRetryAfter: state.options.overloadedRetryAfterSeconds)
            {
                return (response, 0)
            }
            if fault == .timeout { await pause(milliseconds: state.options.timeoutDelaySeconds * 1000) }
        }
        switch parsed {
        case .failure(let error):
            return (api.errorResponse(error), 0)
        case .success(let call):
            return await answer(call, api: api, truncated: fault == .truncate)
        }
    }

    private func answer(
        _ call: ParsedCall, api: some CompletionAPI, truncated: Bool
    ) async -> (Response, Int) {
        let (answer, batch) = state.composeAnswer(call)
        let inputTokens = call.conversation.inputTokens
        let billing = call.withSearchResults(
            call.cachedTokens.map { InputBilling(uncached: inputTokens - $0, cacheRead: $0) }
                ?? state.cacheBook.bill(
                    api: api.cacheAPI, model: call.model, inputTokens: inputTokens,
                    prefix: api.cacheablePrefix(of: call.conversation)))
        let slowdown = call.flex && !call.flexAsDefault ? state.flex.slowdown : 1
        await pause(
            milliseconds: state.latency.nextMilliseconds(outputTokens: answer.outputTokens) * slowdown)
        let json = api.answerBody(for: call, answer: answer, billing: billing, at: state.now())
        if truncated { return (FaultResponses.truncated(json), answer.outputTokens) }

        let billed = BilledTokens(billing, outputTokens: answer.outputTokens, searches: call.searches.count)
        let stats = state.stats
        let endpoint = api.endpoint
        stats.recordAnswer(endpoint, billed: billed, batch: batch, window: api.billingWindow(at: state.now()))
        // Billed once made, whether or not its caller is still there to read it: a provider runs a
        // call that is not streamed to its end and bills it when its caller left (OpenRouter's
        // documentation says so; Anthropic and OpenAI bill calls their caller timed out).
        let body = ResponseBody(contentLength: json.readableBytes) { writer in
            try await writer.write(json)
            try await writer.finish(nil)
        }
        let response = Response(status: .ok, headers: [.contentType: "application/json"], body: body)
        return (response, answer.outputTokens)
    }

    private func pause(milliseconds: Double) async {
        await state.shutdown.pause(milliseconds: milliseconds)
    }
}

extension SimFault {
    /// The answer of a fault that replaces the call's answer; nil for faults that delay or
    /// damage the normal answer instead.
    /// - Parameters:
    ///   - retryAfter: the `retry-after` seconds of a 429.
    ///   - overloadedRetryAfter: the `retry-after` seconds of a 529 (503 at OpenAI), if it says one.
    func immediateResponse(api: any CompletionAPI, retryAfter: Int, overloadedRetryAfter: Int? = nil)
        -> Response?
    {
        switch self {
        case .rateLimited:
            return api.errorResponse(
                SimAPIError(
                    .rateLimited, "offpeak-sim: simulated rate limit (fault 429)", retryAfter: retryAfter))
        case .serverError:
            return api.errorResponse(
                SimAPIError(.server, "offpeak-sim: simulated internal error (fault 500)"))
        case .overloaded:
            return api.errorResponse(
                SimAPIError(
                    .overloaded, "offpeak-sim: simulated overload (fault 529)",
                    retryAfter: overloadedRetryAfter))
        case .quotaSpent:
            return api.errorResponse(SimAPIError(.quotaSpent, SimAPIError.quotaMessage))
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
}
