import CCurl
import Foundation

/// The transfer loop's own thread: the only code that touches its multi handle, its easy handles
/// and the transfers in flight, so none of that needs a lock.
///
/// Each turn it takes new orders from the inbox and adds their handles to the multi handle, ends
/// the exchanges whose cancellation flag was raised, lets libcurl move every transfer along
/// (`curl_multi_perform`), hands finished ones their result, then sleeps in `curl_multi_poll`
/// until a socket is ready, one of libcurl's timers (connect and total timeouts) is due, or
/// another thread wakes it (`curl_multi_wakeup`, on a new order, a raised flag or a shutdown).
///
/// Connections belong to the multi handle's connection cache, not to the easy handles, so any
/// exchange reuses any idle connection to the same host; libcurl keeps up to four per transfer
/// in flight. Easy handles are recycled too (`curl_easy_reset`), up to `maxIdleHandles`.
final class TransferLoopThread {
    /// An exchange in flight: its transfer (which libcurl's callbacks reach) and its order.
    private struct Running {
        let transfer: HTTPTransfer
        let order: TransferOrder
    }

    /// `curl_global_init` must run once before any handle exists; a static runs exactly once. First,
    /// OpenSSL is told not to free its state at exit, where the loop's thread may still be using it
    /// (see `offpeak_openssl_without_atexit_cleanup` in CCurl's shim).
    private static let curlReady: Bool = {
        _ = offpeak_openssl_without_atexit_cleanup()
        return curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()
    /// The longest sleep in `curl_multi_poll`; wakes and libcurl's own timers usually come first.
    private static let longestSleepMilliseconds: Int32 = 1000

    private let inbox: TransferInbox
    private let multi: UnsafeMutableRawPointer
    private let maxIdleHandles: Int
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private var running: [UnsafeMutableRawPointer: Running] = [:]

    /// Runs the loop on the calling thread until the inbox is closed, then ends every exchange
    /// still in flight or queued with the inbox's reason (`.cancelled` on a shutdown).
    static func run(inbox: TransferInbox, maxIdleHandles: Int) {
        guard curlReady, let multi = curl_multi_init() else {
            let left = inbox.retire(
                .other(code: -1, message: "libcurl could not start (curl_multi_init failed)"))
            for order in left.orders { order.complete(.failure(left.closed)) }
            return
        }
        let loop = TransferLoopThread(inbox: inbox, multi: multi, maxIdleHandles: maxIdleHandles)
        inbox.install(LoopWaker(multi))
        loop.turnUntilClosed()
        let left = inbox.retire(.cancelled)
        for order in left.orders { order.complete(.failure(left.closed)) }
        loop.endAll(with: left.closed)
        loop.cleanUp()
    }

    private init(inbox: TransferInbox, multi: UnsafeMutableRawPointer, maxIdleHandles: Int) {
        self.inbox = inbox
        self.multi = multi
        self.maxIdleHandles = maxIdleHandles
    }

    private func turnUntilClosed() {
        while true {
            let (orders, closed) = inbox.take()
            if let closed {
                for order in orders { order.complete(.failure(closed)) }
                return
            }
            for order in orders { start(order) }
            endCancelled()
            var stillRunning: Int32 = 0
            let performed = curl_multi_perform(multi, &stillRunning)
            if performed != CURLM_OK { endAll(with: Self.failure(performed)) }
            collectFinished()
            let polled = curl_multi_poll(multi, nil, 0, Self.longestSleepMilliseconds, nil)
            if polled != CURLM_OK { endAll(with: Self.failure(polled)) }
        }
    }

    /// Adds the order's exchange to the multi handle, or ends it at once when it cannot start.
    private func start(_ order: TransferOrder) {
        guard !order.cancellations.contains(where: \.isCancelled) else {
            return order.complete(.failure(.cancelled))
        }
        guard let handle = idleHandles.popLast() ?? curl_easy_init() else {
            return order.complete(.failure(.other(code: -1, message: "curl_easy_init failed")))
        }
        let transfer = HTTPTransfer(
            handle: handle, request: order.request, maxBodyBytes: order.maxBodyBytes,
            cancellations: order.cancellations)
        if let failure = transfer.configure() {
            recycle(handle)
            return order.complete(.failure(failure))
        }
        let added = curl_multi_add_handle(multi, handle)
        guard added == CURLM_OK else {
            recycle(handle)
            return order.complete(.failure(Self.failure(added)))
        }
        running[handle] = Running(transfer: transfer, order: order)
    }

    /// Reports every transfer libcurl says is done, whatever its result.
    private func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            // The message does not outlive curl_multi_remove_handle: copy what is needed first.
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else {
                continue
            }
            let code = offpeak_curl_msg_result(message)
            end(handle) { $0.finish(code) }
        }
    }

    /// Ends, as `.cancelled`, every exchange one of whose flags is raised.
    private func endCancelled() {
        for (handle, exchange) in running where exchange.transfer.isCancelled {
            end(handle) { _ in .failure(.cancelled) }
        }
    }

    /// Ends every exchange in flight with `error`.
    private func endAll(with error: TransportError) {
        for handle in running.keys { end(handle) { _ in .failure(error) } }
    }

    /// Takes the handle out of the multi handle (aborting the exchange if it was not done, which
    /// closes its connection), works out the result, recycles the handle and reports the result.
    private func end(
        _ handle: UnsafeMutableRawPointer, result: (HTTPTransfer) -> Result<HTTPResponse, TransportError>
    ) {
        guard let exchange = running.removeValue(forKey: handle) else { return }
        _ = curl_multi_remove_handle(multi, handle)
        let outcome = result(exchange.transfer)
        recycle(handle)
        exchange.order.complete(outcome)
    }

    /// Clears the handle's options and keeps it for the next exchange, or frees it.
    private func recycle(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        if idleHandles.count < maxIdleHandles {
            idleHandles.append(handle)
        } else {
            curl_easy_cleanup(handle)
        }
    }

    private func cleanUp() {
        for handle in idleHandles { curl_easy_cleanup(handle) }
        idleHandles.removeAll()
        _ = curl_multi_cleanup(multi)
    }

    private static func failure(_ code: CURLMcode) -> TransportError {
        .other(code: Int(code.rawValue), message: String(cString: curl_multi_strerror(code)))
    }
}
