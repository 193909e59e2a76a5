/// Why an HTTP exchange produced no complete response. HTTP error statuses are not transport
/// errors: they arrive as an `HTTPResponse`.
enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No connection was made (refused, DNS failure, TLS handshake): the request never reached
    /// the server.
    case couldNotConnect(String)
    /// A connection was made but nothing came back: reset or closed while sending or before the
    /// status line. The server may have received, and acted on, the request.
    case connectionLost(String)
    /// The connect timeout or the total timeout (the one that fired, in seconds) ran out.
    case timedOut(Double)
    /// The status line arrived but the connection ended before the whole body did.
    case partial(String)
    /// A `CancellationFlag` was raised, the awaiting task was cancelled, or the client was shut
    /// down, while the exchange was running or before it started.
    case cancelled
    /// The body grew past `HTTPClient.maxResponseBytes`; kept out of memory on purpose.
    case responseTooLarge(limit: Int)
    /// Any other libcurl failure: its `CURLcode` and message.
    case other(code: Int, message: String)

    var description: String {
        switch self {
        case .couldNotConnect(let why): return "could not connect: \(why)"
        case .connectionLost(let why): return "connection lost before an answer: \(why)"
        case .timedOut(let seconds): return "timed out after \(seconds) s"
        case .partial(let why): return "response cut off: \(why)"
        case .cancelled: return "cancelled"
        case .responseTooLarge(let limit): return "response larger than \(limit) bytes"
        case .other(let code, let message): return "curl error \(code): \(message)"
        }
    }
}
