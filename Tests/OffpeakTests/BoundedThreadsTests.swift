import Foundation
import Synchronization
import Testing

@testable import Offpeak

/// Blocking work side by side: as many at once as allowed (research sources fetch four at a
/// time), never more, every result in order.
struct BoundedThreadsTests {
    @Test func widthAtOnceNeverMoreAndResultsInOrder() {
        let running = Mutex((now: 0, most: 0))
        let allIn = DispatchSemaphore(value: 0)
        let results = BoundedThreads.map(12, width: 4) { index in
            let now = running.withLock { state in
                state.now += 1
                state.most = max(state.most, state.now)
                return state.now
            }
            // The first four wait for each other: they can only all get here if four run at once.
            if index < 4 {
                if now == 4 {
                    for _ in 0..<3 { allIn.signal() }
                } else {
                    _ = allIn.wait(timeout: .now() + 20)
                }
            }
            running.withLock { $0.now -= 1 }
            return index * index
        }
        #expect(results == (0..<12).map { $0 * $0 })
        #expect(running.withLock { $0.most } == 4)
    }

    @Test func nothingToDoIsNothing() {
        #expect(BoundedThreads.map(0, width: 4) { $0 }.isEmpty)
    }
}
