import Foundation

/// What a fetch brought back: a new copy, or word that the cached one is still current.
enum FetchOutcome: Sendable, Equatable {
    case fetched(CachedSource)
    /// A `304` to a conditional request: the copy with that ETag / Last-Modified is current.
    case notModified
}

/// Why a research source could not be used. Every description is one line naming the URL.
///
/// `SourceFetcher` builds these from redacted text only: the URL, libcurl's message and the
/// server's reason have been through its `Redactor`.
enum SourceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No answer: refused, DNS failure, timeout, cut off, another libcurl failure, or a site
    /// whose robots.txt cannot be read now. Often temporary (offline): the item waits, or works
    /// from a stale cached copy.
    case unreachable(String, String)
    /// The server answered with this status (4xx, 5xx, or a 3xx left after the redirects: too
    /// many, or to a URL that is not http or https), and the start of what its error page says,
    /// on one line (empty when it sent no text).
    case http(String, Int, reason: String = "")
    /// The media type is not text (a PDF, an image, a binary download).
    case unsupportedType(String, String)
    /// The body is larger than this many bytes.
    case tooLarge(String, Int)
    /// The body is not text in its declared (or the default UTF-8) encoding.
    case notText(String)
    /// The site's robots.txt does not let offpeak fetch this URL; it was not asked for.
    case disallowed(String)

    /// The URL the error is about.
    var url: String {
        switch self {
        case .unreachable(let url, _), .http(let url, _, _), .unsupportedType(let url, _),
            .tooLarge(let url, _), .notText(let url), .disallowed(let url):
            return url
        }
    }

    var description: String {
        switch self {
        case .unreachable(let url, let why): return "source \(url) unreachable: \(why)"
        case .http(let url, let status, let reason) where reason.isEmpty:
            return "source \(url) answered HTTP \(status)"
        case .http(let url, let status, let reason): return "source \(url) answered HTTP \(status): \(reason)"
        case .unsupportedType(let url, let type):
            return "source \(url) is \(type), not text (expected text/*, JSON or XML)"
        case .tooLarge(let url, let limit): return "source \(url) is larger than \(limit) bytes"
        case .notText(let url): return "source \(url) is not readable text in its declared encoding"
        case .disallowed(let url): return "source \(url) is disallowed by its site's robots.txt for offpeak"
        }
    }
}

/// Fetches one research source over HTTP with the shared `HTTPClient`, as a polite and careful
/// reader of other people's servers: it names itself, asks only for text, revalidates instead of
/// downloading again, keeps to a few requests at a time per host (`hosts`), and refuses anything
/// too large or not text before it can fill the context. It follows redirects itself, one request
/// per hop (see `follow`), so a caller can check each hop against its site's robots.txt.
///
/// HTML is reduced to its readable text (`HTMLText`); plain text, JSON and XML are kept as sent.
/// Whatever the server sent that offpeak keeps (the text, its type and validators, the error and
/// its reason) goes through `redactor` first: a page can carry a key as well as an error can.
struct SourceFetcher: Sendable {
    /// Names offpeak and where to learn about it, so a site owner can tell who is reading.
    static let userAgent = "offpeak/0.1 (research-source fetcher; +https://github.com/offpeak)"
    static let accept = "text/*, application/json, application/xml;q=0.9"
    /// 2 MiB: far more text than a prompt can use, and a bound on what one page can cost us.
    static let defaultMaxBytes = 2 * 1024 * 1024

    let client: HTTPClient
    var connectTimeout: TimeInterval
    var timeout: TimeInterval
    var maxBytes: Int
    /// Redirects followed before a 3xx counts as the answer.
    var maxRedirects: Int
    /// Spaces out and bounds the requests to each host, shared by every copy of this fetcher.
    var hosts: HostGate
    /// Cleans fetched text and fetch errors of credentials; by default, of this process's keys
    /// and every key shape.
    var redactor: Redactor

    init(
        client: HTTPClient, connectTimeout: TimeInterval = 10, timeout: TimeInterval = 30,
        maxBytes: Int = SourceFetcher.defaultMaxBytes, maxRedirects: Int = 5, hosts: HostGate = HostGate(),
        redactor: Redactor = Redactor(environment: ProcessInfo.processInfo.environment)
    ) {
        self.client = client
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.maxRedirects = maxRedirects
        self.hosts = hosts
        self.redactor = redactor
    }

    /// Fetches `url`, following up to `maxRedirects` redirects; with `etag` or `lastModified` from
    /// a cached copy the request is conditional and a `304` comes back as `.notModified`.
    /// - Parameters:
    ///   - now: stamped on the copy as `fetchedAt`.
    ///   - asSent: keep the text as the server sent it, HTML included (robots.txt is read so).
    func fetch(
        _ url: String, etag: String? = nil, lastModified: String? = nil, now: Date = Date(),
        cancellation: CancellationFlag? = nil, asSent: Bool = false
    ) throws(SourceError) -> FetchOutcome {
        let followed = follow(
            url, etag: etag, lastModified: lastModified, now: now, cancellation: cancellation, asSent: asSent
        ) { (_: String) throws(Never) -> SourceError? in nil }
        return try followed.outcome.get()
    }

    /// One request with no redirect followed: what it brought, or where it points.
    enum Hop {
        case answered(FetchOutcome)
        /// A `301`, `302`, `303`, `307` or `308` with a `Location`, as sent (maybe relative).
        case redirect(status: Int, location: String, response: HTTPResponse)
    }

    /// Asks for `requested` once, through the host gate; a fetched copy is stamped with `url`.
    /// - Parameter shown: the URL errors name, redacted.
    func exchange(
        _ requested: String, for url: String, shown: String, etag: String?, lastModified: String?, now: Date,
        cancellation: CancellationFlag?, asSent: Bool
    ) throws(SourceError) -> Hop {
        var headers = [(name: "User-Agent", value: Self.userAgent), (name: "Accept", value: Self.accept)]
        if let etag { headers.append((name: "If-None-Match", value: etag)) }
        if let lastModified { headers.append((name: "If-Modified-Since", value: lastModified)) }
        let request = HTTPRequest(
            url: requested, headers: headers, connectTimeout: connectTimeout, timeout: timeout,
            maxRedirects: 0, maxBodyBytes: maxBytes)
        let response: HTTPResponse
        do {
            response = try hosts.run(host: Self.origin(of: requested) ?? requested) {
                () throws(TransportError) in try client.send(request, cancellation: cancellation)
            }
        } catch {
            switch error {
            case .responseTooLarge(let limit): throw .tooLarge(shown, limit)
            default: throw .unreachable(shown, redactor.redact(error.description))
            }
        }
        if response.status == 304, etag != nil || lastModified != nil { return .answered(.notModified) }
        if [301, 302, 303, 307, 308].contains(response.status), let location = response.header("location") {
            return .redirect(status: response.status, location: location, response: response)
        }
        guard (200..<300).contains(response.status) else {
            throw .http(shown, response.status, reason: reason(in: response))
        }
        let type = MediaType(response.header("content-type"))
        guard type.isText else { throw .unsupportedType(shown, redactor.redact(type.essence)) }
        guard let decoded = type.decode(response.body), !decoded.contains("\u{0}") else {
            throw .notText(shown)
        }
        let text = type.isHTML && !asSent ? HTMLText.text(fromHTML: decoded) : decoded
        return .answered(
            .fetched(
                CachedSource(
                    url: url, contentType: redactor.redact(type.essence), text: redactor.redact(text),
                    etag: response.header("etag").map(redactor.redact),
                    lastModified: response.header("last-modified").map(redactor.redact), fetchedAt: now)))
    }

    /// What an error page says, on one line of at most 200 characters (HTML reduced to its text),
    /// redacted before it is cut; empty for a page that is not text.
    func reason(in response: HTTPResponse) -> String {
        let type = MediaType(response.header("content-type"))
        guard type.isText, !response.body.isEmpty else { return "" }
        let raw = String(decoding: response.body.prefix(64 * 1024), as: UTF8.self)
        let text = redactor.redact(type.isHTML ? HTMLText.text(fromHTML: raw) : raw)
        let line = text.split(whereSeparator: { $0.isWhitespace || $0.isNewline }).joined(separator: " ")
        return String(line.prefix(200))
    }
}

/// A `Content-Type` value: `type/subtype` (lower-cased) and its charset, if given.
struct MediaType: Equatable {
    /// `text/html`; `text/plain` when the server sent no type (the body must still decode as text).
    var essence: String
    var charset: String?

    init(_ header: String?) {
        let parts = (header ?? "").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        let essence = parts.first?.lowercased() ?? ""
        self.essence = essence.isEmpty ? "text/plain" : essence
        charset =
            parts.dropFirst()
            .first { $0.lowercased().hasPrefix("charset=") }
            .map {
                $0.dropFirst("charset=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"' "))
                    .lowercased()
            }
    }

    /// `text/*`, JSON, XML and their `+json` / `+xml` relatives: what a model can read as it is.
    var isText: Bool {
        essence.hasPrefix("text/")
            || ["application/json", "application/xml", "application/xhtml+xml"].contains(essence)
            || essence.hasSuffix("+xml") || essence.hasSuffix("+json")
    }

    var isHTML: Bool { essence == "text/html" || essence == "application/xhtml+xml" }

    /// The body as text: UTF-8 unless the charset says otherwise; a leading byte-order mark is dropped.
    func decode(_ body: Data) -> String? {
        let encoding: String.Encoding
        switch charset {
        case nil, "utf-8", "utf8", "us-ascii", "ascii": encoding = .utf8
        case "iso-8859-1", "latin1", "latin-1", "iso8859-1": encoding = .isoLatin1
        case "windows-1252", "cp1252": encoding = .windowsCP1252
        case "utf-16": encoding = .utf16
        default: return String(data: body, encoding: .utf8).map(Self.dropBOM)
        }
        return String(data: body, encoding: encoding).map(Self.dropBOM)
    }

    private static func dropBOM(_ text: String) -> String {
        text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
    }
}
