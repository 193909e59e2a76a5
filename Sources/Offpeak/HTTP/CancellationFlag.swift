import Synchronization

/// A one-way switch that aborts HTTP exchanges in flight.
///
/// The executor raises it when a SIGTERM grace period runs out; every exchange watching it ends
/// at once with `TransportError.cancelled` (the transfer loop is woken by it, it does not poll),
/// and the retry loop stops sleeping. Once raised it stays raised.
final class CancellationFlag: Sendable {
    /// A registration made by `whenCancelled`, to pass back to `stopWatching`.
    struct Watch: Sendable {
        fileprivate let id: Int
    }

    private struct Watchers {
        var next = 0
        var actions: [Int: @Sendable () -> Void] = [:]
    }

    /// Read without a lock on every chunk of every body; written only under `watchers`' lock, so
    /// a watcher is either registered before the raise (and run by it) or sees the flag raised.
    private let raised = Atomic<Bool>(false)
    private let watchers = Mutex(Watchers())

    init() {}

    /// Asks every exchange watching this flag to stop.
    func cancel() {
        let actions = watchers.withLock { watchers -> [@Sendable () -> Void] in
            guard !raised.load(ordering: .acquiring) else { return [] }
            raised.store(true, ordering: .releasing)
            defer { watchers.actions = [:] }
            return Array(watchers.actions.values)
        }
        // Outside the lock: an action may take other locks, or read this flag.
        for action in actions { action() }
    }

    var isCancelled: Bool {
        raised.load(ordering: .acquiring)
    }

    /// Runs `action` once, on the thread that raises the flag, when it is raised.
    ///
    /// - Returns: the registration to remove with `stopWatching` once the action is no longer
    ///   wanted (a long-lived flag would otherwise keep every action ever given to it), or nil
    ///   when the flag is already raised; the action is then not run, the caller sees the flag.
    func whenCancelled(_ action: @escaping @Sendable () -> Void) -> Watch? {
        watchers.withLock { watchers in
            guard !raised.load(ordering: .acquiring) else { return nil }
            watchers.next += 1
            watchers.actions[watchers.next] = action
            return Watch(id: watchers.next)
        }
    }

    /// Forgets an action registered with `whenCancelled` (nothing happens if it already ran).
    func stopWatching(_ watch: Watch) {
        _ = watchers.withLock { $0.actions.removeValue(forKey: watch.id) }
    }
}
