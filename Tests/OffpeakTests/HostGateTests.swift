import Foundation
import Synchronization
import Testing

@testable import Offpeak

/// `HostGate` by order and counts, never by measured time: waits are read off a test clock, and
/// threads are stepped with semaphores (their timeouts only keep a broken gate from hanging).
struct HostGateTests {
    /// A clock that moves only when told, and the waits the gate asked for.
    final class TestClock: Sendable {
        let instant = Mutex(ContinuousClock.now)
        let waits = Mutex<[Duration]>([])

        func gate(perHost: Int = 2, gap: Duration = .milliseconds(250)) -> HostGate {
            HostGate(
                perHost: perHost, gap: gap, now: { self.instant.withLock { $0 } },
                sleep: { wait in self.waits.withLock { $0.append(wait) } })
        }

        func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
    }

    @Test func startsToOneHostAreSpacedByTheGapAndOtherHostsDoNotWait() {
        let clock = TestClock()
        let gate = clock.gate()
        for host in ["http://a", "http://a", "http://b", "http://a"] { gate.run(host: host) {} }
        #expect(clock.waits.withLock { $0 } == [.milliseconds(250), .milliseconds(500)])
        clock.advance(.seconds(1))
        gate.run(host: "http://a") {}
        gate.run(host: "http://b") {}
        #expect(clock.waits.withLock { $0 }.count == 2, "the gap had passed for both")
    }

    @Test func atMostTwoRequestsToAHostRunAtOnce() {
        let gate = HostGate(gap: .zero)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let third = DispatchSemaphore(value: 0)
        let other = DispatchSemaphore(value: 0)
        let timeout = DispatchTime.now() + 30
        for _ in 0..<2 {
            Thread.detachNewThread {
                gate.run(host: "http://a") {
                    entered.signal()
                    release.wait()
                }
            }
        }
        // Both are inside at once: a gate of one would leave the second waiting here.
        #expect(entered.wait(timeout: timeout) == .success)
        #expect(entered.wait(timeout: timeout) == .success)
        Thread.detachNewThread { gate.run(host: "http://a") { _ = third.signal() } }
        Thread.detachNewThread { gate.run(host: "http://b") { _ = other.signal() } }
        #expect(other.wait(timeout: timeout) == .success, "another host does not wait")
        #expect(third.wait(timeout: .now() + 0.2) == .timedOut, "a third to the same host waits")
        release.signal()
        #expect(third.wait(timeout: timeout) == .success, "and goes in when one leaves")
        release.signal()
    }

    /// How many bodies are inside the gate for one host, and the most there ever were.
    final class Occupancy: Sendable {
        let counts = Mutex((now: 0, most: 0))

        func enter() { counts.withLock { $0 = (now: $0.now + 1, most: max($0.most, $0.now + 1)) } }
        func leave() { counts.withLock { $0.now -= 1 } }
        var most: Int { counts.withLock { $0.most } }
    }

    @Test func manyThreadsNeverExceedTheLimit() {
        let gate = HostGate(perHost: 2, gap: .zero)
        let inside = Occupancy()
        let done = BoundedThreads.map(12, width: 6) { index in
            gate.run(host: index.isMultiple(of: 3) ? "http://b" : "http://a") {
                guard !index.isMultiple(of: 3) else { return index }
                inside.enter()
                Thread.sleep(forTimeInterval: 0.005)
                inside.leave()
                return index
            }
        }
        #expect(done == Array(0..<12))
        #expect(inside.most <= 2)
    }
}
