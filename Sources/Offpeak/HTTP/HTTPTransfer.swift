import CCurl
import Foundation

/// One exchange on one easy handle: sets the options, collects what the C callbacks deliver, and
/// turns libcurl's result into a response or a `TransportError`.
///
/// Owned by the transfer loop's thread from `configure` to `finish`: libcurl runs the callbacks on
/// that thread, inside `curl_multi_perform`, and reaches this object through an unretained pointer,
/// which is safe because the loop keeps the transfer until its handle has left the multi handle.
final class HTTPTransfer {
    private let handle: UnsafeMutableRawPointer
    private let request: HTTPRequest
    private let maxBodyBytes: Int
    private let cancellations: [CancellationFlag]

    private var body = Data()
    private var headers: [String: String] = [:]
    private var sawStatusLine = false
    private var exceededLimit = false
    private var started = ContinuousClock.now
    /// The handle points at both until `finish` (or `curl_easy_reset`); they go with the transfer.
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))

    /// - Parameters:
    ///   - maxBodyBytes: the client's cap; the request's own cap applies when it is smaller, and
    ///     its `largeBodyBytes` in place of both.
    ///   - cancellations: any one raised aborts the exchange.
    init(
        handle: UnsafeMutableRawPointer, request: HTTPRequest, maxBodyBytes: Int,
        cancellations: [CancellationFlag]
    ) {
        self.handle = handle
        self.request = request
        self.maxBodyBytes = request.largeBodyBytes ?? min(maxBodyBytes, request.maxBodyBytes ?? maxBodyBytes)
        self.cancellations = cancellations
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    var isCancelled: Bool {
        cancellations.contains { $0.isCancelled }
    }

    /// Sets every option of the exchange on the handle, ready for `curl_multi_add_handle`.
    ///
    /// - Returns: nil when the handle is ready, else why it is not.
    func configure() -> TransportError? {
        // "Name;" is libcurl's spelling of a header with an empty value. A bare "Expect:" removes
        // libcurl's 100-continue wait before bodies over 1 KiB, a round trip on every call.
        var lines = request.headers.map { $0.value.isEmpty ? "\($0.name);" : "\($0.name): \($0.value)" }
        if !request.headers.contains(where: { $0.name.lowercased() == "expect" }) { lines.append("Expect:") }
        for line in lines {
            guard let extended = curl_slist_append(headerList, line) else {
                return .other(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "out of memory")
            }
            headerList = extended
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        let setup =
            [
                offpeak_curl_setopt_string(handle, CURLOPT_URL, request.url),
                offpeak_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
                offpeak_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
                offpeak_curl_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1),
                offpeak_curl_setopt_string(handle, CURLOPT_USERAGENT, HTTPClient.userAgent),
                offpeak_curl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, ""),
                offpeak_curl_setopt_long(
                    handle, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(request.connectTimeout)),
                offpeak_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeout)),
                offpeak_curl_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxBodyBytes)),
                offpeak_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList),
                offpeak_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer),
                offpeak_curl_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION) {
                    HTTPTransfer.receiveBody($0, $1, $2, $3)
                },
                offpeak_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, me),
                offpeak_curl_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION) {
                    HTTPTransfer.receiveHeader($0, $1, $2, $3)
                },
                offpeak_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, me),
            ] + setMethodAndBody() + setRedirects()
        guard let failed = setup.first(where: { $0 != CURLE_OK }) else {
            started = .now
            return nil
        }
        return .other(code: Int(failed.rawValue), message: String(cString: curl_easy_strerror(failed)))
    }

    /// The outcome, once libcurl has reported the transfer done with `code` and the handle has
    /// left the multi handle. Detaches the buffers the handle pointed at.
    func finish(_ code: CURLcode) -> Result<HTTPResponse, TransportError> {
        defer {
            _ = offpeak_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, nil)
            _ = offpeak_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, nil)
        }
        let elapsed = started.duration(to: .now)
        if code == CURLE_OK {
            var status = 0
            _ = offpeak_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            return .success(HTTPResponse(status: status, headers: headers, body: body))
        }
        let detail = String(cString: errorBuffer)
        let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        return .failure(classify(code, message: message, elapsed: elapsed))
    }

    /// Sets the verb and, when there is one, the body (copied by libcurl, so no lifetime to keep).
    private func setMethodAndBody() -> [CURLcode] {
        switch request.method.uppercased() {
        case "GET" where request.body.isEmpty: return [offpeak_curl_setopt_long(handle, CURLOPT_HTTPGET, 1)]
        case "HEAD": return [offpeak_curl_setopt_long(handle, CURLOPT_NOBODY, 1)]
        default:
            var codes = [
                offpeak_curl_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
            ]
            if request.body.isEmpty {
                codes.append(offpeak_curl_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, ""))
            } else {
                codes.append(
                    request.body.withUnsafeBytes { bytes in
                        offpeak_curl_setopt_pointer(
                            handle, CURLOPT_COPYPOSTFIELDS,
                            UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                    })
            }
            if request.method.uppercased() != "POST" {
                codes.append(offpeak_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method))
            }
            return codes
        }
    }

    /// Follows up to `maxRedirects` redirects, and only to http and https: a page must not be able
    /// to send libcurl to `file://` or another protocol it speaks.
    private func setRedirects() -> [CURLcode] {
        guard request.maxRedirects > 0 else {
            return [offpeak_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)]
        }
        return [
            offpeak_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 1),
            offpeak_curl_setopt_long(handle, CURLOPT_MAXREDIRS, request.maxRedirects),
            offpeak_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"),
        ]
    }

    /// Maps a libcurl failure onto what a caller can act on.
    private func classify(_ code: CURLcode, message: String, elapsed: Duration) -> TransportError {
        switch code {
        case CURLE_ABORTED_BY_CALLBACK: return .cancelled
        case CURLE_WRITE_ERROR where isCancelled: return .cancelled
        case CURLE_WRITE_ERROR where exceededLimit, CURLE_FILESIZE_EXCEEDED:
            return .responseTooLarge(limit: maxBodyBytes)
        case CURLE_OPERATION_TIMEDOUT:
            // One code covers both timeouts; the one that fired is the one nearest the time spent.
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            let connect = abs(seconds - request.connectTimeout) < abs(seconds - request.timeout)
            return .timedOut(connect ? request.connectTimeout : request.timeout)
        case CURLE_PARTIAL_FILE: return .partial(message)
        case CURLE_RECV_ERROR where sawStatusLine: return .partial(message)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY,
            CURLE_SSL_CONNECT_ERROR:
            return .couldNotConnect(message)
        case CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_SEND_ERROR: return .connectionLost(message)
        default: return .other(code: Int(code.rawValue), message: message)
        }
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        seconds.isFinite && seconds > 0 ? Int(min(seconds * 1000, Double(Int32.max)).rounded(.up)) : 0
    }

    // MARK: C callbacks

    private static func transfer(_ userdata: UnsafeMutableRawPointer?) -> HTTPTransfer? {
        userdata.map { Unmanaged<HTTPTransfer>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func receiveBody(
        _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
    ) -> Int {
        guard let transfer = transfer(userdata), let data else { return 0 }
        let length = size * count
        if transfer.isCancelled { return 0 }
        guard transfer.body.count + length <= transfer.maxBodyBytes else {
            transfer.exceededLimit = true
            return 0
        }
        transfer.body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: length)
        return length
    }

    /// Called once per header line; a status line starts a new header set (after 100-continue).
    private static func receiveHeader(
        _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
    ) -> Int {
        guard let transfer = transfer(userdata), let data else { return 0 }
        let length = size * count
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        let line = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if line.hasPrefix("HTTP/") {
            transfer.sawStatusLine = true
            transfer.headers = [:]
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            transfer.headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return length
    }
}
