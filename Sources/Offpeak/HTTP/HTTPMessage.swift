import Foundation

/// One HTTP request as `HTTPClient` sends it: everything is explicit, nothing is inherited from a
/// session, so a call can be replayed exactly on retry.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    /// Sent in order; names are sent as given. Values often hold API keys: never log them.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// Seconds to wait for the TCP (and TLS) connection.
    public var connectTimeout: TimeInterval
    /// Seconds the whole exchange may take, connection included.
    public var timeout: TimeInterval
    /// Redirects followed before giving up; 0 (the default) returns a 3xx as it is. Provider calls
    /// never follow; fetched web pages do, to http and https targets only.
    public var maxRedirects: Int = 0
    /// A tighter body cap than the client's for this request only (a web page, not a completion);
    /// the smaller of the two applies.
    public var maxBodyBytes: Int?

    public init(
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
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Header names lower-cased; when a header repeats, the last value wins.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A header by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}
