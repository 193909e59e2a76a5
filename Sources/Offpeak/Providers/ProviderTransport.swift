import Foundation
import Logging

/// The call-and-retry loop both API shapes share: sends one request (a JSON POST for live calls), classifies each failed
/// attempt as a `ProviderError`, and asks `RetryPolicy` whether and when to try again.
///
/// Logs each attempt at debug level with method, path, status, attempt and latency only:
/// headers carry API keys and bodies carry the user's data, so neither is ever logged. What the
/// server sends back leaves `exchange` redacted (`ProviderOptions.redactor`).
struct ProviderTransport: Sendable {
    let options: ProviderOptions
    let logger: Logger

    /// POSTs `body` and reads the 2xx answer with `read`. What the server sent (the answer's
    /// text, model and id, or the error's message, and libcurl's messages, which may quote the
    /// URL) leaves here redacted, so the store, the outputs, the logs and what commands print
    /// never hold a credential a server or proxy echoed back.
    func exchange(
        _ url: String, headers: [(name: String, value: String)], body: Data,
        read: (Data) throws(ProviderError) -> CompletionResponse
    ) throws(ProviderError) -> CompletionResponse {
        try answer(send(url, headers: headers, body: body).response, read: read).get()
    }

    /// `exchange`, with the failure returned rather than thrown, and what the provider's headers
    /// said about its rate limits.
    /// - Parameter timeout: seconds each attempt may take; nil: `options.requestTimeout`.
    func call(
        _ url: String, headers: [(name: String, value: String)], body: Data, timeout: TimeInterval? = nil,
        repeats: Repeats = .asPolicySays, read: (Data) throws(ProviderError) -> CompletionResponse
    ) -> CallReply {
        let sent = send(url, method: "POST", headers: headers, body: body, repeats: repeats, timeout: timeout)
        var reply = CallReply(
            answer: answer(sent.response, read: read).mapError { error -> any Error in error },
            rateLimit: sent.rateLimit, attempts: sent.attempts, throttledAttempts: sent.throttledAttempts)
        reply.servedAt = HTTPDate.parse(try? sent.response.get().header("date"))
        return reply
    }

    /// The answer read from a response, or the failure; either way redacted.
    private func answer(
        _ response: Result<HTTPResponse, ProviderError>,
        read: (Data) throws(ProviderError) -> CompletionResponse
    ) -> Result<CompletionResponse, ProviderError> {
        do {
            return .success(try read(try response.get().body).redacted(by: options.redactor))
        } catch {
            return .failure(error.redacted(by: options.redactor))
        }
    }

    /// What came of one POST and its retries.
    struct Delivery {
        /// The first 2xx response, or the last attempt's failure.
        var response: Result<HTTPResponse, ProviderError>
        /// The rate-limit headers of the last HTTP response; `.none` until one arrives.
        var rateLimit = RateLimitHeaders.none
        var attempts = 0
        /// Attempts answered 429, 529 or 503 (`CallOutcome.throttles`).
        var throttledAttempts = 0
    }

    /// Which failed attempts may be sent again.
    enum Repeats: Sendable {
        /// Whatever `RetryPolicy` retries.
        case asPolicySays
        /// Only those the server certainly did not act on (no connection made, 429, 529), and
        /// only when the policy retries them too: for calls that are not idempotent, like creating
        /// a provider batch, where a second call after a timeout could create a second batch.
        case ifNeverActedOn
        /// Whatever `RetryPolicy` retries, except a refusal of the structured-answer form
        /// (`StructuredAnswer.isRefusal`): llama-cpp-python answers `json_schema` with a 500, and
        /// asking twice more gets the same 500. The session remembers the refusal and sends the
        /// items again without the form.
        case unlessTheFormIsRefused
    }

    /// POSTs `body` to `url` until it gets a 2xx answer or the policy gives up.
    ///
    /// - Returns: the first 2xx response (reading it is the caller's job: a 2xx that cannot be
    ///   read is not retried, the same request would get the same answer), or the last attempt's
    ///   failure; with the attempts made and the last response's rate-limit headers.
    func send(_ url: String, headers: [(name: String, value: String)], body: Data) -> Delivery {
        send(url, method: "POST", headers: headers, body: body)
    }

    /// `send` with any method; `largeBodyBytes` raises the response cap for this call (a batch's
    /// results), `repeats` narrows what is retried, and `timeout` replaces `options.requestTimeout`
    /// for this call's attempts (libcurl's timeout is per transfer).
    func send(
        _ url: String, method: String, headers: [(name: String, value: String)], body: Data,
        largeBodyBytes: Int? = nil, repeats: Repeats = .asPolicySays, timeout: TimeInterval? = nil
    ) -> Delivery {
        var request = HTTPRequest(
            method: method, url: url, headers: headers, body: [UInt8](body),
            connectTimeout: options.connectTimeout, timeout: timeout ?? options.requestTimeout)
        request.largeBodyBytes = largeBodyBytes
        let path = URL(string: url)?.path ?? ""
        var random = SystemRandomNumberGenerator()
        var delivery = Delivery(response: .failure(.unreachable("not sent")))
        var attempt = 0
        while true {
            let started = ContinuousClock.now
            let failure: ProviderError
            var errorCode: String?
            var retryAfter: String?
            var neverActedOn = false
            delivery.attempts += 1
            do {
                let response = try options.httpClient.send(request, cancellation: options.cancellation)
                log(method, path: path, outcome: "\(response.status)", attempt: attempt, since: started)
                delivery.rateLimit = RateLimitHeaders(headers: response.headers, receivedAt: Date())
                if (200..<300).contains(response.status) {
                    delivery.response = .success(response)
                    return delivery
                }
                let details = Self.errorDetails(in: response.body, redactor: options.redactor)
                failure = details.error(status: response.status, url: url)
                errorCode = details.code
                retryAfter = response.header("retry-after") ?? details.retryAfter
                neverActedOn = response.status == 429 || response.status == 529
                if CallOutcome.throttles(
                    status: response.status, errorCode: errorCode, message: details.message)
                {
                    delivery.throttledAttempts += 1
                }
            } catch {
                log(method, path: path, outcome: Self.kind(of: error), attempt: attempt, since: started)
                failure = Self.providerError(for: error)
                if case .couldNotConnect = error { neverActedOn = true }
            }
            delivery.response = .failure(failure)
            if repeats == .ifNeverActedOn, !neverActedOn { return delivery }
            if repeats == .unlessTheFormIsRefused, case .http(let status, let message, _) = failure,
                StructuredAnswer.isRefusal(status: status, message: message)
            {
                return delivery
            }
            let decision = options.retryPolicy.decision(
                for: failure, errorCode: errorCode, retryAfterHeader: retryAfter, attempt: attempt,
                random: &random)
            guard case .retry(let wait) = decision, options.cancellation?.isCancelled != true else {
                return delivery
            }
            logger.debug(
                "provider retry",
                metadata: ["path": "\(path)", "attempt": "\(attempt + 1)", "wait_s": "\(wait)"])
            sleep(wait)
            if options.cancellation?.isCancelled == true { return delivery }
            attempt += 1
        }
    }

    /// `base` and `path` joined with exactly one slash, whatever the user typed.
    static func endpoint(_ base: String, _ path: String) -> String {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    /// A transport failure as the rest of offpeak sees it. A cancelled call counts as
    /// unreachable: the work is not failed, it resumes on the next run.
    static func providerError(for error: TransportError) -> ProviderError {
        switch error {
        case .couldNotConnect(let why), .connectionLost(let why): return .unreachable(why)
        case .timedOut(let seconds): return .timeout(seconds: seconds)
        case .partial(let why): return .truncated(why)
        case .cancelled: return .unreachable("cancelled")
        case .responseTooLarge(let limit): return .badResponse("answer larger than \(limit) bytes")
        case .other(let code, let message): return .unreachable("curl error \(code): \(message)")
        }
    }

    private static func kind(of error: TransportError) -> String {
        switch error {
        case .couldNotConnect: return "could-not-connect"
        case .connectionLost: return "connection-lost"
        case .timedOut: return "timeout"
        case .partial: return "partial"
        case .cancelled: return "cancelled"
        case .responseTooLarge: return "too-large"
        case .other(let code, _): return "curl-\(code)"
        }
    }

    private func log(
        _ method: String, path: String, outcome: String, attempt: Int, since started: ContinuousClock.Instant
    ) {
        let latency = started.duration(to: .now).components
        let milliseconds = latency.seconds * 1000 + latency.attoseconds / 1_000_000_000_000_000
        logger.debug(
            "provider call",
            metadata: [
                "method": "\(method)", "path": "\(path)", "status": "\(outcome)", "attempt": "\(attempt + 1)",
                "latency_ms": "\(milliseconds)",
            ])
    }

    private func sleep(_ seconds: TimeInterval) {
        if let sleep = options.sleep { return sleep(seconds) }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, options.cancellation?.isCancelled != true {
            Thread.sleep(forTimeInterval: min(0.1, max(0, deadline.timeIntervalSinceNow)))
        }
    }
}
