import Foundation

/// Keeps the fetcher's requests to any one host few and spaced out: at most `perHost` at once,
/// and each one starting at least `gap` after the previous one to that host started. Requests to
/// different hosts never wait for each other.
///
/// Shared by the threads of one `ResearchSources.contexts` (one fetcher, one gate), so a job with
/// many sources on one site reads it like a patient person, not like a load test.
///
/// A class over `NSCondition` rather than a `Mutex`: a caller waits, blocking its thread (the
/// fetcher's threads are its own, see `BoundedThreads`), until its host has a free slot.
final class HostGate: @unchecked Sendable {
    /// Two connections per host, as RFC 9110's predecessors advised and browsers still roughly do.
    static let defaultPerHost = 2
    /// A quarter second between request starts to one host: unnoticeable for a handful of sources.
    static let defaultGap: Duration = .milliseconds(250)

    let perHost: Int
    let gap: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let sleep: @Sendable (Duration) -> Void

    /// Guards `running` and `nextStart`; signalled whenever a request ends.
    private let condition = NSCondition()
    private var running: [String: Int] = [:]
    private var nextStart: [String: ContinuousClock.Instant] = [:]

    /// - Parameters:
    ///   - now, sleep: the clock the gap is kept by and how a request waits for it; tests replace
    ///     them to see the waits without waiting.
    init(
        perHost: Int = HostGate.defaultPerHost, gap: Duration = HostGate.defaultGap,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        sleep: @escaping @Sendable (Duration) -> Void = HostGate.pause
    ) {
        self.perHost = max(1, perHost)
        self.gap = gap
        self.now = now
        self.sleep = sleep
    }

    /// Runs `body` once `host` has a free slot and its gap has passed, holding the slot until
    /// `body` returns.
    /// - Parameter host: whatever names a server: the fetcher passes `scheme://host:port`.
    func run<Value, Failure: Error>(host: String, _ body: () throws(Failure) -> Value) throws(Failure)
        -> Value
    {
        let wait = enter(host)
        if wait > .zero { sleep(wait) }
        defer { leave(host) }
        return try body()
    }

    /// Blocks the calling thread for `duration`.
    static func pause(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) * 1e-18)
    }

    /// Takes a slot on `host` and reserves the next start time; returns how long to wait for it.
    private func enter(_ host: String) -> Duration {
        condition.lock()
        defer { condition.unlock() }
        while running[host, default: 0] >= perHost { condition.wait() }
        running[host, default: 0] += 1
        let current = now()
        let start = max(current, nextStart[host] ?? current)
        nextStart[host] = start + gap
        return start - current
    }

    private func leave(_ host: String) {
        condition.lock()
        running[host, default: 1] -= 1
        if running[host] == 0 { running[host] = nil }
        condition.broadcast()
        condition.unlock()
    }
}
