import Synchronization

/// Enforces `RateLimits` per endpoint the way the providers do, with one `TokenBucket` per
/// limit.
///
/// A call is checked against every bucket before it is answered: requests cost 1; input tokens
/// cost what the API counts (see `RateCost`); output tokens are estimated from `max_tokens` at the
/// start, and what the answer did not use is given back when it is done, as Anthropic describes
/// for OTPM and OpenAI for TPM. A call over any limit is refused whole (it takes nothing) with the
/// seconds until every bucket could hold it. Every method takes the time, so tests drive the
/// clock; the server passes `.now`.
final class RateLimiter: Sendable {
    private typealias Buckets = [RateLimitKind: TokenBucket]

    let limits: RateLimits
    private let buckets: Mutex<[SimEndpoint: Buckets]>

    init(limits: RateLimits, now: ContinuousClock.Instant = .now) {
        self.limits = limits
        self.buckets = Mutex(Self.fresh(limits, now: now))
    }

    /// Admits the call and reserves its cost, or refuses it and reserves nothing.
    func admit(
        _ endpoint: SimEndpoint, cost: RateCost, now: ContinuousClock.Instant = .now
    ) -> RateDecision {
        buckets.withLock { all in
            guard var set = all[endpoint], !set.isEmpty else { return .admitted(RateTicket(endpoint, cost)) }
            for kind in set.keys { set[kind]?.refill(to: now) }
            var slowest: (kind: RateLimitKind, seconds: Double)?
            for kind in RateLimitKind.allCases {
                guard let bucket = set[kind] else { continue }
                let seconds = bucket.secondsUntil(holding: Double(cost.amount(of: kind)))
                if seconds > 0, seconds > slowest?.seconds ?? 0 { slowest = (kind, seconds) }
            }
            if let slowest, let bucket = set[slowest.kind] {
                all[endpoint] = set
                return .refused(
                    RateRefusal(
                        kind: slowest.kind, limit: Int(bucket.capacity),
                        requested: cost.amount(of: slowest.kind),
                        secondsUntilAdmitted: slowest.seconds))
            }
            for kind in set.keys { set[kind]?.take(Double(cost.amount(of: kind))) }
            all[endpoint] = set
            return .admitted(RateTicket(endpoint, cost))
        }
    }

    /// Gives back the output tokens an admitted call reserved and did not produce (all of them
    /// when it produced no answer).
    func settle(_ ticket: RateTicket, outputTokens: Int, now: ContinuousClock.Instant = .now) {
        let unused = Double(max(0, ticket.cost.maxOutputTokens - outputTokens))
        guard unused > 0 else { return }
        buckets.withLock { all in
            for kind in [RateLimitKind.outputTokens, .tokens] where all[ticket.endpoint]?[kind] != nil {
                all[ticket.endpoint]?[kind]?.refill(to: now)
                all[ticket.endpoint]?[kind]?.giveBack(unused)
            }
        }
    }

    /// Each set limit's state on `endpoint` now, for the response headers.
    func report(_ endpoint: SimEndpoint, now: ContinuousClock.Instant = .now) -> RateLimitReport {
        buckets.withLock { all in
            var report = RateLimitReport()
            for kind in RateLimitKind.allCases where all[endpoint]?[kind] != nil {
                all[endpoint]?[kind]?.refill(to: now)
                if let bucket = all[endpoint]?[kind] {
                    report.states[kind] = RateLimitState(
                        limit: Int(bucket.capacity), remaining: bucket.remaining,
                        secondsUntilFull: bucket.secondsUntilFull)
                }
            }
            return report
        }
    }

    /// Full buckets again (`POST /sim/reset`).
    func reset(now: ContinuousClock.Instant = .now) {
        buckets.withLock { $0 = Self.fresh(limits, now: now) }
    }

    private static func fresh(_ limits: RateLimits, now: ContinuousClock.Instant) -> [SimEndpoint: Buckets] {
        var set: Buckets = [:]
        for kind in RateLimitKind.allCases {
            if let perMinute = limits.perMinute(kind) {
                set[kind] = TokenBucket(perMinute: perMinute, now: now)
            }
        }
        return Dictionary(uniqueKeysWithValues: SimEndpoint.allCases.map { ($0, set) })
    }
}

/// What one call counts against the limits.
struct RateCost: Sendable, Equatable {
    /// Input tokens as the API counts them for its limit: Anthropic leaves cache reads out,
    /// OpenAI counts every prompt token.
    var inputTokens: Int
    /// The request's `max_tokens`, reserved until the answer's real size is known.
    var maxOutputTokens: Int

    func amount(of kind: RateLimitKind) -> Int {
        switch kind {
        case .requests: return 1
        case .inputTokens: return inputTokens
        case .outputTokens: return maxOutputTokens
        case .tokens: return inputTokens + maxOutputTokens
        }
    }
}

/// An admitted call's reservation, settled when its answer is known.
struct RateTicket: Sendable, Equatable {
    var endpoint: SimEndpoint
    var cost: RateCost

    init(_ endpoint: SimEndpoint, _ cost: RateCost) {
        self.endpoint = endpoint
        self.cost = cost
    }
}

enum RateDecision: Sendable, Equatable {
    case admitted(RateTicket)
    case refused(RateRefusal)
}

/// Why a call was refused: the limit that keeps it waiting longest.
struct RateRefusal: Sendable, Equatable {
    var kind: RateLimitKind
    var limit: Int
    var requested: Int
    /// Infinite when the call costs more than the whole limit and can never be admitted.
    var secondsUntilAdmitted: Double

    var neverFits: Bool { secondsUntilAdmitted.isInfinite }

    /// The error message, the same on both endpoints.
    var message: String {
        let limit = "\(limit) \(kind.unit) per minute (offpeak-sim \(kind.flag))"
        if neverFits {
            return
                "offpeak-sim: this request needs \(requested) \(kind.unit), more than the whole rate limit of "
                + "\(limit); it can never be admitted"
        }
        let wait = RateLimitHeaders.goDuration(seconds: secondsUntilAdmitted)
        return "offpeak-sim: this request would exceed the rate limit of \(limit); "
            + "the response headers show current usage; try again in \(wait)"
    }

    /// The `retry-after` header: whole seconds, rounded up so a client that waits exactly that
    /// long is admitted; a minute for a call that can never fit.
    var retryAfterSeconds: Int {
        neverFits ? 60 : max(1, Int((secondsUntilAdmitted - 1e-6).rounded(.up)))
    }
}

/// One limit's state as the headers report it.
struct RateLimitState: Sendable, Equatable {
    var limit: Int
    var remaining: Int
    var secondsUntilFull: Double
}

/// Every set limit's state on one endpoint at one instant.
struct RateLimitReport: Sendable, Equatable {
    var states: [RateLimitKind: RateLimitState] = [:]
}
