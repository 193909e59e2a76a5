import Foundation
import Synchronization

/// An HTTP client over libcurl, safe to share between threads and tasks, with any number of
/// exchanges in flight at once.
///
/// Every exchange runs on the client's `TransferLoop`: one thread driving libcurl's multi
/// interface, whatever the number in flight, so `async` callers never block a thread of Swift's
/// cooperative pool. Connections (and TLS sessions, DNS entries) stay alive across exchanges;
/// that keep-alive is what makes many small calls cheap. The blocking `send` waits for the same
/// loop, so both kinds of caller get exactly the same timeouts, caps and errors.
final class HTTPClient: Sendable {
    /// The default cap on a response body: far above any completion, low enough to protect memory.
    static let defaultMaxResponseBytes = 64 * 1024 * 1024
    /// Sent on every request so provider logs can tell offpeak apart.
    static let userAgent = "offpeak/0.1 (+libcurl)"

    /// Bodies larger than this fail with `.responseTooLarge`.
    let maxResponseBytes: Int
    /// Where every exchange runs; tests reach it to time answers where they arrive.
    let loop: TransferLoop

    /// - Parameters:
    ///   - maxResponseBytes: the largest body accepted.
    ///   - maxIdleHandles: libcurl handles kept for reuse between exchanges; open connections are
    ///     kept by the loop, up to four per exchange in flight.
    init(maxResponseBytes: Int = HTTPClient.defaultMaxResponseBytes, maxIdleHandles: Int = 8) {
        self.maxResponseBytes = maxResponseBytes
        self.loop = TransferLoop(maxIdleHandles: maxIdleHandles)
    }

    /// Sends one request and waits, blocking this thread, for the whole response.
    ///
    /// - Parameter cancellation: when raised, the exchange ends at once with `.cancelled`.
    /// - Returns: the response, whatever its status.
    /// - Throws: `TransportError` when no complete response arrived.
    func send(_ request: HTTPRequest, cancellation: CancellationFlag? = nil) throws(TransportError)
        -> HTTPResponse
    {
        if cancellation?.isCancelled == true { throw .cancelled }
        let outcome = PendingOutcome()
        loop.submit(request, maxBodyBytes: maxResponseBytes, cancellations: cancellation.map { [$0] } ?? []) {
            outcome.deliver($0)
        }
        return try outcome.wait().get()
    }

    /// Sends one request and suspends, without holding a thread, until the whole response is in.
    ///
    /// - Parameter cancellation: when raised, or when the calling task is cancelled, the exchange
    ///   ends at once with `.cancelled`.
    /// - Returns: the response, whatever its status.
    /// - Throws: `TransportError` when no complete response arrived.
    func send(_ request: HTTPRequest, cancellation: CancellationFlag? = nil)
        async throws(TransportError)
        -> HTTPResponse
    {
        if cancellation?.isCancelled == true || Task.isCancelled { throw .cancelled }
        let taskCancelled = CancellationFlag()
        let flags = [taskCancelled] + (cancellation.map { [$0] } ?? [])
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<HTTPResponse, TransportError>, Never>) in
                loop.submit(request, maxBodyBytes: maxResponseBytes, cancellations: flags) {
                    continuation.resume(returning: $0)
                }
            }
        } onCancel: {
            taskCancelled.cancel()
        }
        return try result.get()
    }

    /// Ends every exchange in flight with `.cancelled` and refuses new ones (they fail with
    /// `.cancelled` too). Returns at once; the client's thread ends soon after. Freeing the client
    /// does the same.
    func shutdown() {
        loop.shutdown()
    }
}

/// The result of one blocking `send`, handed from the loop's thread to the waiting one.
private final class PendingOutcome: Sendable {
    private let result = Mutex<Result<HTTPResponse, TransportError>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func deliver(_ outcome: Result<HTTPResponse, TransportError>) {
        result.withLock { $0 = outcome }
        ready.signal()
    }

    func wait() -> Result<HTTPResponse, TransportError> {
        ready.wait()
        // Set before the signal, and the loop reports each exchange exactly once.
        return result.withLock { $0 } ?? .failure(.cancelled)
    }
}
