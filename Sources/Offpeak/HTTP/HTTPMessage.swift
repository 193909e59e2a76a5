import Foundation

/// One HTTP request as `HTTPClient` sends it: everything is explicit, nothing is inherited from a
/// session, so a call can be replayed exactly on retry.
struct HTTPRequest: Sendable {
    var method: String
    var url: String
    /// Sent in order; names are sent as given. Values often hold API keys: never log them.
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// Seconds to wait for the TCP (and TLS) connection.
    var connectTimeout: TimeInterval
    /// Seconds the whole exchange may take, connection included.
    var timeout: TimeInterval
    /// Redirects followed before giving up; 0 (the default) returns a 3xx as it is. Provider calls
    /// never follow, and `SourceFetcher` follows its own, one request per hop, to check each one.
    var maxRedirects: Int = 0
    /// A tighter body cap than the client's for this request only (a web page, not a completion);
    /// the smaller of the two applies.
    var maxBodyBytes: Int?
    /// A cap that replaces the client's (and `maxBodyBytes`) for a download known to be large:
    /// a provider batch's results, which can run to hundreds of megabytes. Held in memory.
    var largeBodyBytes: Int?

    init(
        method: String = "GET", url: String, headers: [(name: String, value: String)] = [],
        body: [UInt8] = [], connectTimeout: TimeInterval = 10, timeout: TimeInterval = 120,
        maxRedirects: Int = 0, maxBodyBytes: Int? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.maxRedirects = maxRedirects
        self.maxBodyBytes = maxBodyBytes
    }
}

/// A complete HTTP response; any status counts as a response; only transport failures throw.
struct HTTPResponse: Sendable, Equatable {
    var status: Int
    /// Header names lower-cased; when a header repeats, the last value wins.
    var headers: [String: String]
    var body: Data

    init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A header by case-insensitive name.
    func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}
