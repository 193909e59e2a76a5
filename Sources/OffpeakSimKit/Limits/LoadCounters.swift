import Synchronization

/// How hard clients pushed the sim: API calls in flight now and at most, and calls the rate
/// limiter answered 429, by the limit that refused them.
///
/// Kept apart from `SimStats` (what was billed) because these describe load, not money; both
/// are reported together by `GET /sim/stats`. The high-water mark is how a test proves a client
/// really had several calls in flight at once.
final class LoadCounters: Sendable {
    private struct State {
        var inFlight = 0
        var snapshot = LoadSnapshot()
    }

    private let state = Mutex(State())

    /// An API call has arrived; pair with `leave()` when its answer is ready.
    func enter() {
        state.withLock { state in
            state.inFlight += 1
            state.snapshot.inFlight = state.inFlight
            state.snapshot.maxInFlight = max(state.snapshot.maxInFlight, state.inFlight)
        }
    }

    func leave() {
        state.withLock { state in
            state.inFlight -= 1
            state.snapshot.inFlight = state.inFlight
        }
    }

    /// A call the limiter refused with 429 (injected 429 faults are counted as faults instead).
    func recordRateLimited(_ kind: RateLimitKind) {
        state.withLock { state in
            state.snapshot.rateLimited += 1
            state.snapshot.rateLimitedBy[kind.rawValue, default: 0] += 1
        }
    }

    func snapshot() -> LoadSnapshot {
        state.withLock { $0.snapshot }
    }

    /// Zero counters; calls still in flight stay counted, so the gauge never goes negative.
    func reset() {
        state.withLock { state in
            state.snapshot = LoadSnapshot()
            state.snapshot.inFlight = state.inFlight
            state.snapshot.maxInFlight = state.inFlight
        }
    }
}

/// The load counters at one instant, as `/sim/stats` adds them beside the billing counters.
public struct LoadSnapshot: Sendable, Equatable, Codable {
    /// Calls answered 429 by the rate limiter (not by an injected `429` fault).
    public var rateLimited = 0
    /// The same calls by the limit that refused them; every kind is listed.
    public var rateLimitedBy: [String: Int] = Dictionary(
        uniqueKeysWithValues: RateLimitKind.allCases.map { ($0.rawValue, 0) })
    /// API calls being answered now (latency included).
    public var inFlight = 0
    /// The most API calls that were ever being answered at once since start or reset.
    public var maxInFlight = 0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case rateLimited = "rate_limited"
        case rateLimitedBy = "rate_limited_by"
        case inFlight = "in_flight"
        case maxInFlight = "max_in_flight"
    }
}
