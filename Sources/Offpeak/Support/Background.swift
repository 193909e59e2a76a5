import Foundation
import Synchronization

/// Work started on a thread of its own and waited for later, so the caller goes on with its own
/// work meanwhile: `offpeak submit` reads and parses the next chunk of lines while the store
/// commits the one before.
final class Background<Value: Sendable>: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Mutex<Result<Value, OffpeakError>?>(nil)

    init(_ work: @escaping @Sendable () throws(OffpeakError) -> Value) {
        Thread.detachNewThread { [self] in
            let result: Result<Value, OffpeakError>
            do throws(OffpeakError) { result = .success(try work()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    /// The work's value once it is done, or what it threw.
    func value() throws(OffpeakError) -> Value {
        done.wait()
        done.signal()  // for the next caller
        guard let result = outcome.withLock({ $0 }) else {
            throw OffpeakError(.software, "background work signalled done without a result")
        }
        return try result.get()
    }
}
