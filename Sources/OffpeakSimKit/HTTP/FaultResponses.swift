import Hummingbird

/// Answers that break the HTTP exchange itself, for faults an error status cannot express.
enum FaultResponses {
    /// Thrown from a response body on purpose, which makes Hummingbird close the connection.
    struct TruncatedOnPurpose: Error {}

    /// A 200 that promises the whole answer in `Content-Length`, sends half of it, and closes
    /// the connection: a client sees a transfer error (curl: "transfer closed with N bytes
    /// remaining to read", exit 18), like a proxy or network dropping a long answer.
    static func truncated(_ json: ByteBuffer) -> Response {
        let half = json.getSlice(at: json.readerIndex, length: json.readableBytes / 2) ?? ByteBuffer()
        let body = ResponseBody(contentLength: json.readableBytes) { writer in
            try await writer.write(half)
            throw TruncatedOnPurpose()
        }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: body)
    }

    /// The error of an echo fault: `status` with a message that repeats every request header as
    /// it arrived (`name: value`, one per line) and the body, the way some proxies and servers
    /// put the request into their errors, API key and all.
    static func echo(status: Int, headers: HTTPFields, body: ByteBuffer, retryAfter: Int) -> SimAPIError {
        let lines = headers.map { "\($0.name.rawName): \($0.value)" }
        let message = "echo: " + lines.joined(separator: "\n") + "\nbody=" + String(buffer: body)
        switch status {
        case 400: return SimAPIError(.invalidRequest, message)
        case 429: return SimAPIError(.rateLimited, message, retryAfter: retryAfter)
        case 502: return SimAPIError(.badGateway, message)
        case 529: return SimAPIError(.overloaded, message)
        default: return SimAPIError(.server, message)
        }
    }

    /// The page a misbehaving gateway returns instead of the API's JSON.
    static func badGatewayPage() -> Response {
        Response(
            status: SimAPIError.status(502),
            headers: [.contentType: "text/html"],
            body: .init(byteBuffer: ByteBuffer(string: "<html><body><h1>502 Bad Gateway</h1></body></html>")))
    }
}
