import CCurl
import Synchronization

/// One exchange handed to the transfer loop: the request and who to tell when it ends.
///
/// Everything in it is `Sendable`: it is made on the caller's thread and read on the loop's.
struct TransferOrder: Sendable {
    var request: HTTPRequest
    /// The client's cap on the body; `HTTPTransfer` applies the request's own when smaller.
    var maxBodyBytes: Int
    /// Any one raised ends the exchange with `.cancelled`.
    var cancellations: [CancellationFlag]
    /// What the loop registered on those flags to be woken; removed when the exchange ends.
    var watches: [(flag: CancellationFlag, watch: CancellationFlag.Watch)] = []
    /// Called exactly once, on the loop's thread: it must only hand the result on, never block.
    var completion: @Sendable (Result<HTTPResponse, TransportError>) -> Void

    /// Ends the order: forgets the cancellation watches, then reports `result`.
    func complete(_ result: Result<HTTPResponse, TransportError>) {
        for (flag, watch) in watches { flag.stopWatching(watch) }
        completion(result)
    }
}

/// Wakes the loop's `curl_multi_poll` from any thread.
///
/// The multi handle is otherwise touched only by the loop's thread; `curl_multi_wakeup` is the one
/// libcurl call documented safe from any thread, and it is all this type can do with the pointer,
/// hence the one `nonisolated(unsafe)`. The inbox drops its waker (under its lock) before the loop
/// cleans the multi handle up, so no wake can reach a freed handle.
struct LoopWaker: Sendable {
    nonisolated(unsafe) private let multi: UnsafeMutableRawPointer

    init(_ multi: UnsafeMutableRawPointer) {
        self.multi = multi
    }

    func wake() {
        _ = curl_multi_wakeup(multi)
    }
}

/// What crosses between the threads that send and the transfer loop's thread: new orders, the
/// request to stop, and the way to wake the loop. All of it under one lock, held only briefly.
final class TransferInbox: Sendable {
    /// What a caller learns when it posts an order.
    enum Posting {
        /// The loop will run it; `startThread` is true for the first order ever, whose poster
        /// starts the loop's thread (so a client that never sends costs no thread).
        case accepted(startThread: Bool)
        /// The loop is closed: the order was not taken and ends with this error.
        case refused(TransportError)
    }

    private struct State {
        var orders: [TransferOrder] = []
        var closed: TransportError?
        var threadStarted = false
        var waker: LoopWaker?
    }

    private let state = Mutex(State())

    /// Queues `order` for the loop and wakes it.
    func post(_ order: TransferOrder) -> Posting {
        state.withLock { state in
            if let closed = state.closed { return .refused(closed) }
            state.orders.append(order)
            state.waker?.wake()
            defer { state.threadStarted = true }
            return .accepted(startThread: !state.threadStarted)
        }
    }

    /// Wakes the loop so it looks at its cancellation flags and its inbox again.
    func wake() {
        state.withLock { $0.waker?.wake() }
    }

    /// Refuses new orders from now on and has the loop end every exchange with `reason`.
    func close(_ reason: TransportError) {
        state.withLock { state in
            if state.closed == nil { state.closed = reason }
            state.waker?.wake()
        }
    }

    // MARK: The loop's side

    /// Called by the loop's thread once its multi handle exists, before its first `take`.
    func install(_ waker: LoopWaker) {
        state.withLock { $0.waker = waker }
    }

    /// The orders posted since the last call, and why the loop must stop, if it must.
    func take() -> (orders: [TransferOrder], closed: TransportError?) {
        state.withLock { state in
            defer { state.orders = [] }
            return (state.orders, state.closed)
        }
    }

    /// Called by the loop's thread as it ends: closes the inbox (with `reason` unless it was
    /// closed already), drops the waker before the multi handle goes, and returns the orders
    /// posted since the last `take`, which the loop then ends.
    func retire(_ reason: TransportError) -> (orders: [TransferOrder], closed: TransportError) {
        state.withLock { state in
            let closed = state.closed ?? reason
            state.closed = closed
            state.waker = nil
            defer { state.orders = [] }
            return (state.orders, closed)
        }
    }
}
