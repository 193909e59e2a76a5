import Foundation
import Synchronization

/// Decides whether one more call to a provider may start now and, if not, until when to wait:
/// within the calls in flight the provider copes with (`InFlightCap`), within its requests and
/// tokens per minute (configured, and as its headers report them), and not before a `retry-after`.
///
/// So offpeak waits *before* a limit is hit rather than learning of it from a 429. One limiter per
/// provider, shared by every thread that sends to it; cheap (a lock and a few comparisons per
/// call) and deterministic: it never reads the clock, callers pass `now`.
///
/// For each call: `admit` it. `.go(ticket)`: send it, then report with `finished` what came back
/// (or `withdraw` it if it was never sent after all). `.waitForCall`: every slot is taken, ask
/// again when a call in flight finishes. `.wait(until:because:)`: ask again then.
final class CallLimiter: Sendable {
    /// A call admitted and not yet finished.
    struct CallTicket: Sendable, Equatable {
        /// Calls are numbered in the order they were admitted.
        let number: Int
        let estimatedTokens: Int
    }

    enum Admission: Sendable, Equatable {
        case go(CallTicket)
        case waitForCall
        case wait(until: Date, because: WaitReason)
    }

    /// Which limit holds the next call, in words for the log and for status.
    enum WaitReason: String, Sendable {
        case retryAfter = "the provider asked to wait (retry-after)"
        case requestsPerMinute = "requests per minute"
        case tokensPerMinute = "tokens per minute"
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - inFlight: calls in flight at most (at least 1).
    ///   - requestsPerMinute, tokensPerMinute: offpeak's own limits; `nil` for none beyond what the
    ///     provider reports.
    init(inFlight: Int, requestsPerMinute: Int? = nil, tokensPerMinute: Int? = nil) {
        state = Mutex(
            State(
                cap: InFlightCap(most: inFlight), requestsPerMinute: requestsPerMinute,
                tokensPerMinute: tokensPerMinute))
    }

    /// The limiter for `limits` as configured for `provider`, calls going to `baseURL`.
    convenience init(_ limits: ProviderLimits, provider: ProviderKind, baseURL: String) {
        self.init(
            inFlight: limits.inFlight(for: provider, baseURL: baseURL),
            requestsPerMinute: limits.requestsPerMinute, tokensPerMinute: limits.tokensPerMinute)
    }

    /// Whether a call estimated at `estimatedTokens` (input and output) may start at `now`. On
    /// `.go` the call counts as in flight from now on.
    func admit(estimatedTokens: Int, now: Date) -> Admission {
        state.withLock { $0.admit(tokens: max(0, estimatedTokens), now: now) }
    }

    /// A call came back.
    /// - Parameters:
    ///   - outcome: answered, throttled (on any attempt) or failed.
    ///   - headers: the rate-limit headers of its last response.
    ///   - attempts: HTTP attempts it took; retries count against requests per minute too.
    ///   - usedTokens: what it used, replacing its estimate; `nil` keeps the estimate.
    func finished(
        _ ticket: CallTicket, outcome: CallOutcome, headers: RateLimitHeaders, now: Date, attempts: Int = 1,
        usedTokens: Int? = nil
    ) {
        state.withLock {
            $0.finish(
                ticket, outcome: outcome, headers: headers, now: now, attempts: attempts,
                usedTokens: usedTokens)
        }
    }

    /// A call came back with `reply`; what it used is its usage, input of every kind and output.
    func finished(_ ticket: CallTicket, reply: CallReply, now: Date) {
        let used = try? reply.answer.get().usage
        finished(
            ticket, outcome: CallOutcome(reply), headers: reply.rateLimit, now: now, attempts: reply.attempts,
            usedTokens: used.map { $0.totalInput + $0.output })
    }

    /// An admitted call that was never sent: its slot and its share of the limits come back.
    func withdraw(_ ticket: CallTicket) {
        state.withLock { $0.withdraw(ticket) }
    }

    /// Calls admitted and not yet finished.
    var inFlight: Int { state.withLock { $0.inFlight.count } }
    /// Calls allowed in flight now (halved on push-back, grown back on answers).
    var inFlightCap: Int { state.withLock { $0.cap.current } }
}
