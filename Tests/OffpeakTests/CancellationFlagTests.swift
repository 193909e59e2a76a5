import Synchronization
import Testing

@testable import Offpeak

/// The flag's watchers, which wake the transfer loop the moment a flag is raised.
struct CancellationFlagTests {
    final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        func bump() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    @Test func raisingRunsEachWatcherOnce() {
        let flag = CancellationFlag()
        let first = Counter()
        let second = Counter()
        #expect(flag.whenCancelled { first.bump() } != nil)
        #expect(flag.whenCancelled { second.bump() } != nil)
        flag.cancel()
        flag.cancel()
        #expect(flag.isCancelled)
        #expect(first.value == 1 && second.value == 1)
    }

    @Test func aWatcherRemovedIsNotRun() throws {
        let flag = CancellationFlag()
        let counter = Counter()
        let watch = try #require(flag.whenCancelled { counter.bump() })
        flag.stopWatching(watch)
        flag.cancel()
        #expect(counter.value == 0)
    }

    @Test func watchingARaisedFlagSaysSoInsteadOfRunning() {
        let flag = CancellationFlag()
        flag.cancel()
        let counter = Counter()
        #expect(flag.whenCancelled { counter.bump() } == nil)
        #expect(counter.value == 0)
    }
}
