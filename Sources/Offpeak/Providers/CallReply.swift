import Foundation

/// One call's answer or failure, with what the provider said about its limits on the way.
///
/// `complete(_:)` throws away the response headers; the run loop needs them from answers and
/// failures alike, to keep calls in flight within the provider's limits (`CallLimiter`).
struct CallReply: Sendable {
    /// The answer, or why there is none (a `ProviderError` from the providers offpeak ships).
    var answer: Result<CompletionResponse, any Error>
    /// The rate-limit headers of the last HTTP response, answer or error; `.none` when none came.
    var rateLimit: RateLimitHeaders
    /// HTTP attempts made, retries included; 0 when the request never left (no key, no body).
    var attempts: Int
    /// Attempts the provider answered as too busy (`CallOutcome.throttles`), retried ones included.
    var throttledAttempts: Int
    /// When the provider made its answer, by its own clock (the response's `Date` header): the moment
    /// it billed the call, which decides the price where prices change with the clock. nil: it
    /// did not say.
    var servedAt: Date? = nil

    init(
        answer: Result<CompletionResponse, any Error>, rateLimit: RateLimitHeaders = .none, attempts: Int = 1,
        throttledAttempts: Int = 0
    ) {
        self.answer = answer
        self.rateLimit = rateLimit
        self.attempts = attempts
        self.throttledAttempts = throttledAttempts
    }
}

extension CompletionProvider {
    /// A live `call(_:timeout:lane:)` within the configured `http.timeout`.
    func call(_ request: CompletionRequest) -> CallReply {
        call(request, timeout: nil, lane: .live)
    }

    /// `complete(_:)` with nothing learned about limits, within its own timeout: for providers
    /// that see no headers, and have no flex processing.
    func call(_ request: CompletionRequest, timeout: TimeInterval?, lane: CallLane) -> CallReply {
        guard lane == .live else {
            return CallReply(
                answer: .failure(
                    ProviderError.http(
                        status: 400, message: "this provider has no \(lane.rawValue) processing")))
        }
        do {
            return CallReply(answer: .success(try complete(request)))
        } catch {
            return CallReply(answer: .failure(error))
        }
    }
}
