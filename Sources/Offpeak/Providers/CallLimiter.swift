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
///
/// Limits the user set are also held across every process on the store (`SharedCallLimits`): a
/// call this limiter admits then needs the store's grant too. What the provider's headers report,
/// a `retry-after` and the halving of calls in flight on push-back stay this process's own.
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
        case callsInFlight = "calls in flight on every host"
    }

    private let state: Mutex<State>
    /// The limits held with the other processes on the store; nil: this process's alone.
    let shared: SharedCallLimits?

    /// - Parameters:
    ///   - inFlight: calls in flight at most (at least 1).
    ///   - requestsPerMinute, tokensPerMinute: offpeak's own limits; `nil` for none beyond what the
    ///     provider reports.
    ///   - shared: the limits held with other processes; nil for none.
    init(
        inFlight: Int, requestsPerMinute: Int? = nil, tokensPerMinute: Int? = nil,
        shared: SharedCallLimits? = nil
    ) {
        state = Mutex(
            State(
                cap: InFlightCap(most: inFlight), requestsPerMinute: requestsPerMinute,
                tokensPerMinute: tokensPerMinute))
        self.shared = shared
    }

    /// The limiter for `limits` as configured for `provider`, calls going to `baseURL`; those set
    /// are held with every process on `book` (the store) as `owner` of `host`.
    convenience init(
        _ limits: ProviderLimits, provider: ProviderKind, baseURL: String,
        sharedOn book: (any SharedLimitBook)? = nil, owner: String = ProcessOwner.current, host: String = ""
    ) {
        let shared = book.flatMap { book in
            SharedLimits(limits, provider: provider, baseURL: baseURL).map {
                SharedCallLimits(book: book, limits: $0, owner: owner, host: host)
            }
        }
        self.init(
            inFlight: limits.inFlight(for: provider, baseURL: baseURL),
            requestsPerMinute: limits.requestsPerMinute, tokensPerMinute: limits.tokensPerMinute,
            shared: shared)
    }

    /// Whether a call estimated at `estimatedTokens` (input and output) may start at `now`. On
    /// `.go` the call counts as in flight from now on.
    /// - Throws: the store's faults, when the limits are shared.
    func admit(estimatedTokens: Int, now: Date) throws(OffpeakError) -> Admission {
        let tokens = max(0, estimatedTokens)
        let local = state.withLock { $0.admit(tokens: tokens, now: now) }
        guard let shared else { return local }
        guard case .go(let ticket) = local else {
            // A pause is a good time to give back what this process holds and no longer needs.
            if case .wait = local, shared.owes { try shared.flush(now: now) }
            return local
        }
        let answer: LimitAnswer?
        do { answer = try shared.admit(ticket: ticket.number, tokens: tokens, now: now) } catch {
            state.withLock { $0.withdraw(ticket) }
            throw error
        }
        guard case .wait(let until, let reason) = answer else { return local }
        state.withLock { $0.withdraw(ticket) }
        return .wait(until: until, because: reason)
    }

    /// Gives back to the store what this process holds of the shared limits and no longer uses
    /// (the run's pass ended); nothing when they are not shared.
    func flush(now: Date) throws(OffpeakError) {
        try shared?.flush(now: now)
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
        shared?.finished(ticket: ticket.number, attempts: attempts, usedTokens: usedTokens)
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
        shared?.withdraw(ticket: ticket.number)
    }

    /// Calls admitted and not yet finished.
    var inFlight: Int { state.withLock { $0.inFlight.count } }
    /// Calls allowed in flight now (halved on push-back, grown back on answers).
    var inFlightCap: Int { state.withLock { $0.cap.current } }
    /// The most calls ever allowed in flight: the configured `in_flight`.
    var inFlightMost: Int { state.withLock { $0.cap.most } }
}
