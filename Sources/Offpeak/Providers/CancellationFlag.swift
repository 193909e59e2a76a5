import Synchronization

/// A one-way switch that aborts HTTP exchanges in flight.
///
/// The executor raises it when a SIGTERM grace period runs out; libcurl's progress callback
/// reads it (at least once a second, even on an idle connection) and aborts the transfer, and
/// the retry loop stops sleeping. Once raised it stays raised.
public final class CancellationFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    public init() {}

    /// Asks every exchange watching this flag to stop.
    public func cancel() {
        raised.store(true, ordering: .releasing)
    }

    public var isCancelled: Bool {
        raised.load(ordering: .acquiring)
    }
}
