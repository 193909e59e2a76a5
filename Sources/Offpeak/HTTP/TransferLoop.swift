import Foundation

/// Runs any number of HTTP exchanges at once on one thread of its own, with libcurl's multi
/// interface; each `HTTPClient` has one.
///
/// Why one thread and not a blocking call per exchange: the executor keeps several calls in
/// flight per provider, and Swift's cooperative pool has one thread per core (two on small
/// machines), so blocking calls inside tasks would cap the calls in flight at the core count and
/// starve every other task. libcurl's multi interface runs all transfers on one thread with one
/// `poll`; callers hand it orders from any thread and get results through a callback, which
/// `HTTPClient` turns into an `async` result or a blocking wait.
///
/// Ownership: callers own their `TransferOrder` until they post it; the inbox (under its lock)
/// owns queued orders; the loop's thread (`TransferLoopThread`) owns everything libcurl touches.
/// The thread starts with the first order and ends on `shutdown`, or when this loop is freed.
final class TransferLoop: Sendable {
    private let inbox = TransferInbox()
    private let maxIdleHandles: Int

    /// - Parameter maxIdleHandles: easy handles kept for reuse between exchanges.
    init(maxIdleHandles: Int) {
        self.maxIdleHandles = maxIdleHandles
    }

    deinit {
        inbox.close(.cancelled)
    }

    /// Starts one exchange; `completion` gets its result exactly once, on the loop's thread (or on
    /// the caller's, at once, when the exchange cannot start), and must not block.
    ///
    /// - Parameters:
    ///   - maxBodyBytes: the largest body accepted (the request's own cap applies when smaller).
    ///   - cancellations: raising any one ends the exchange with `.cancelled` at once.
    func submit(
        _ request: HTTPRequest, maxBodyBytes: Int, cancellations: [CancellationFlag],
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) {
        var order = TransferOrder(
            request: request, maxBodyBytes: maxBodyBytes, cancellations: cancellations, completion: completion
        )
        // A raised flag must wake the loop, which would otherwise sleep until a socket stirs.
        for flag in cancellations {
            guard let watch = flag.whenCancelled({ [inbox] in inbox.wake() }) else {
                return order.complete(.failure(.cancelled))
            }
            order.watches.append((flag, watch))
        }
        switch inbox.post(order) {
        case .accepted(let startThread):
            if startThread { startLoopThread() }
        case .refused(let reason):
            order.complete(.failure(reason))
        }
    }

    /// Ends every exchange in flight or queued with `.cancelled` and refuses new ones; returns at
    /// once, the exchanges end as soon as the loop's thread wakes.
    func shutdown() {
        inbox.close(.cancelled)
    }

    private func startLoopThread() {
        let thread = Thread { [inbox, maxIdleHandles] in
            TransferLoopThread.run(inbox: inbox, maxIdleHandles: maxIdleHandles)
        }
        thread.name = "offpeak-http"
        thread.start()
    }
}
