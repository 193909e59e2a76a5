import Foundation
import Synchronization

/// A request to stop, from SIGTERM or SIGINT: no new call starts; calls in flight get a grace
/// period, then `calls` is raised and they are aborted. The run checkpoints and exits 75.
public final class StopSignal: Sendable {
    private let requested = Atomic<Bool>(false)
    private let why = Mutex<String?>(nil)
    /// Aborts calls in flight; hand it to the provider (`ProviderFactory.make(cancellation:)`).
    let calls = CancellationFlag()

    public init() {}

    /// Stops new calls now and aborts calls in flight after `grace` seconds (at once when 0, or
    /// when asked a second time).
    public func request(_ reason: String, grace: TimeInterval) {
        let first = requested.compareExchange(
            expected: false, desired: true, ordering: .acquiringAndReleasing
        )
        .exchanged
        if first { why.withLock { $0 = reason } }
        guard first, grace > 0 else {
            calls.cancel()
            return
        }
        let calls = self.calls
        DispatchQueue.global().asyncAfter(deadline: .now() + grace) { calls.cancel() }
    }

    public var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// What asked to stop ("SIGTERM").
    var reason: String? { why.withLock { $0 } }
}
