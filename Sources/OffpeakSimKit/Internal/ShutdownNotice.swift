import Synchronization

/// Lets the sim's deliberate waits (latency, `timeout` faults) end early once the server starts
/// shutting down.
///
/// Hummingbird's graceful shutdown waits for every request in flight, so without this a
/// SIGTERM during a 30-second `timeout` fault would take 30 seconds. The server marks shutdown
/// when its listening channel closes, the first step of the graceful shutdown.
final class ShutdownNotice: Sendable {
    /// How often a pause looks at the flag; short enough that SIGTERM feels immediate.
    static let pollInterval = Duration.milliseconds(50)

    private let begun = Atomic<Bool>(false)

    var isBegun: Bool { begun.load(ordering: .acquiring) }

    func begin() {
        begun.store(true, ordering: .releasing)
    }

    /// Sleeps for `milliseconds`, or less if shutdown begins or the task is cancelled meanwhile.
    func pause(milliseconds: Double) async {
        guard milliseconds > 0 else { return }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(milliseconds))
        while !isBegun, !Task.isCancelled, clock.now < deadline {
            let wake = min(deadline, clock.now.advanced(by: Self.pollInterval))
            try? await Task.sleep(until: wake, clock: clock)
        }
    }
}
