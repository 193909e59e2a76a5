import Foundation
import Synchronization

/// Blocking work done side by side on a few threads of its own, for work that waits on I/O (HTTP
/// through the shared libcurl loop): Swift's cooperative pool must not be blocked, and GCD's
/// `concurrentPerform` keeps to one thread per core.
enum BoundedThreads {
    /// `body(index)` for every index below `count`, at most `width` at once; returns once all are done,
    /// with their results in index order.
    static func map<Value: Sendable>(
        _ count: Int, width: Int, _ body: @escaping @Sendable (Int) -> Value
    ) -> [Value] {
        guard count > 0 else { return [] }
        let results = Mutex<[Int: Value]>([:])
        let slots = DispatchSemaphore(value: max(1, width))
        let group = DispatchGroup()
        for index in 0..<count {
            slots.wait()
            group.enter()
            Thread.detachNewThread {
                let value = body(index)
                results.withLock { $0[index] = value }
                slots.signal()
                group.leave()
            }
        }
        group.wait()
        return results.withLock { all in (0..<count).compactMap { all[$0] } }
    }
}
