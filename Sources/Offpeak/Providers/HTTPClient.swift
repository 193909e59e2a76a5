import CCurl
import Foundation
import Synchronization

/// A thin, blocking HTTP client over libcurl, safe to share between threads.
///
/// Blocking on purpose: the executor runs calls on its own threads, and a synchronous call keeps
/// retries, timeouts and cancellation easy to reason about. Easy handles are pooled and reset
/// between uses, so libcurl keeps their connections (and TLS sessions, DNS entries) alive across
/// calls; that keep-alive is what makes many small calls cheap.
public final class HTTPClient: Sendable {
    /// The default cap on a response body: far above any completion, low enough to protect memory.
    public static let defaultMaxResponseBytes = 64 * 1024 * 1024
    /// Sent on every request so provider logs can tell offpeak apart.
    static let userAgent = "offpeak/0.1 (+libcurl)"

    /// A libcurl easy handle; only ever used by one thread at a time (the pool hands it out).
    struct EasyHandle: @unchecked Sendable {
        let raw: UnsafeMutableRawPointer
    }

    /// `curl_global_init` must run once before any handle exists; a static runs exactly once.
    private static let curlReady: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    /// Bodies larger than this fail with `.responseTooLarge`.
    public let maxResponseBytes: Int
    private let maxIdleHandles: Int
    private let idle = Mutex<[EasyHandle]>([])

    /// - Parameters:
    ///   - maxResponseBytes: the largest body accepted.
    ///   - maxIdleHandles: handles (and so open connections) kept for reuse; extra ones are closed.
    public init(maxResponseBytes: Int = HTTPClient.defaultMaxResponseBytes, maxIdleHandles: Int = 8) {
        self.maxResponseBytes = maxResponseBytes
        self.maxIdleHandles = maxIdleHandles
    }

    deinit {
        idle.withLock { handles in
            for handle in handles { curl_easy_cleanup(handle.raw) }
            handles.removeAll()
        }
    }

    /// Sends one request and waits for the whole response.
    ///
    /// - Parameter cancellation: when raised, the exchange is aborted within about a second.
    /// - Returns: the response, whatever its status.
    /// - Throws: `TransportError` when no complete response arrived.
    public func send(_ request: HTTPRequest, cancellation: CancellationFlag? = nil) throws(TransportError)
        -> HTTPResponse
    {
        if cancellation?.isCancelled == true { throw .cancelled }
        let handle = try checkOut()
        defer { checkIn(handle) }
        let transfer = HTTPTransfer(
            handle: handle.raw, request: request, maxBodyBytes: maxResponseBytes, cancellation: cancellation)
        return try transfer.perform().get()
    }

    /// An idle handle, or a new one.
    private func checkOut() throws(TransportError) -> EasyHandle {
        guard HTTPClient.curlReady else { throw .other(code: -1, message: "curl_global_init failed") }
        if let handle = idle.withLock({ $0.popLast() }) { return handle }
        guard let raw = curl_easy_init() else { throw .other(code: -1, message: "curl_easy_init failed") }
        return EasyHandle(raw: raw)
    }

    /// Clears the handle's options (its connection cache survives) and keeps it for the next call.
    private func checkIn(_ handle: EasyHandle) {
        curl_easy_reset(handle.raw)
        let kept = idle.withLock { handles in
            guard handles.count < maxIdleHandles else { return false }
            handles.append(handle)
            return true
        }
        if !kept { curl_easy_cleanup(handle.raw) }
    }
}
