import Foundation
import Synchronization

/// A read that runs beside others (`Concurrently.run`) and keeps its outcome until asked for it.
final class Concurrent<Value: Sendable>: ConcurrentWork {
    private let work: @Sendable () throws(OffpeakError) -> Value
    private let outcome = Mutex<Result<Value, OffpeakError>?>(nil)

    init(_ work: @escaping @Sendable () throws(OffpeakError) -> Value) {
        self.work = work
    }

    func run() {
        let result = Result<Value, OffpeakError>(catching: work)
        outcome.withLock { $0 = result }
    }

    /// What the work returned, or the error it threw.
    func value() throws(OffpeakError) -> Value {
        guard let result = outcome.withLock({ $0 }) else {
            throw OffpeakError(.software, "a concurrent read was asked for before it ran")
        }
        return try result.get()
    }
}

protocol ConcurrentWork: Sendable {
    func run()
}

/// Runs independent works at once, on as many threads as the machine has cores, and returns when
/// all have finished: a page made of several reads of the store takes as long as its longest ones,
/// not their sum.
enum Concurrently {
    static func run(_ works: [any ConcurrentWork]) {
        DispatchQueue.concurrentPerform(iterations: works.count) { works[$0].run() }
    }
}
