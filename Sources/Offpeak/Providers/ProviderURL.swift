import Foundation

/// Where offpeak fetches a URL a provider handed back (Anthropic's `results_url`), and the one
/// rule that keeps the API key with the configured base URL.
///
/// A provider, or a server imitating one, may answer an absolute URL, a path (`/v1/...`), a
/// relative path or a `//host/...` reference. Each is resolved against the base URL by RFC 3986
/// (section 5.2), with the base URL taken as a folder (as if it ended in `/`), since offpeak joins
/// every path it sends to the base URL that way: against `http://127.0.0.1:8080/anthropic`,
/// `/anthropic/v1/x` and `v1/x` both become `http://127.0.0.1:8080/anthropic/v1/x`.
///
/// The key headers go to the base URL's origin (scheme, host and port) and nowhere else. A URL
/// that resolves to another origin (the real API's host named through a proxy, or any other) is
/// not fetched as given: the provider's documented endpoint under the base URL is fetched
/// instead, which is where a proxy serves it. libcurl follows no redirect on these calls.
struct ProviderURL: Sendable, Equatable {
    /// What to fetch.
    var url: String
    /// The URL the provider named on another origin, when `url` replaces it (for messages).
    var elsewhere: String?

    /// Resolves `reference` against `base`, falling back to `documented` (a path joined to the base
    /// URL) when the provider gave no URL or named another origin.
    /// - Throws: `ProviderError.badResponse` naming the reference when it is not a URL or a
    ///   reference to one, or names a scheme other than http and https: not transient, the same
    ///   answer would be refused again.
    static func resolve(_ reference: String?, base: String, documented: String) throws(ProviderError)
        -> ProviderURL
    {
        let fallback = ProviderTransport.endpoint(base, documented)
        guard let reference, !reference.isEmpty else { return ProviderURL(url: fallback) }
        guard isWellFormed(reference), let folder = folder(base),
            let resolved = URL(string: reference, relativeTo: folder)?.absoluteURL,
            let scheme = resolved.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = resolved.host, !host.isEmpty
        else {
            throw .badResponse("the provider's URL \(quoted(reference)) is not an http or https URL")
        }
        var text = resolved.absoluteString
        // A fragment is never sent; dropping it leaves the same request.
        if let hash = text.firstIndex(of: "#") { text = String(text[..<hash]) }
        guard let baseURL = URL(string: base), origin(of: resolved) == origin(of: baseURL) else {
            return ProviderURL(url: fallback, elsewhere: text)
        }
        return ProviderURL(url: text)
    }

    /// `scheme://host:port`, lowercased, with the scheme's default port filled in: two URLs of one
    /// origin compare equal however they spell it.
    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
            return nil
        }
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(host):\(port)"
    }

    /// The base URL with its path ending in `/`, so relative paths land under it.
    private static func folder(_ base: String) -> URL? {
        guard var parts = URLComponents(string: base), parts.host != nil else { return nil }
        if !parts.percentEncodedPath.hasSuffix("/") { parts.percentEncodedPath += "/" }
        parts.percentEncodedQuery = nil
        parts.percentEncodedFragment = nil
        return parts.url
    }

    /// Only the characters RFC 3986 allows in a URI reference, each `%` starting an escape:
    /// Foundation would quietly percent-encode a space or a stray `%`, and fetch a URL the
    /// provider never named.
    private static func isWellFormed(_ reference: String) -> Bool {
        let bytes = Array(reference.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else {
                    return false
                }
                index += 3
                continue
            }
            guard allowed.contains(byte) else { return false }
            index += 1
        }
        return true
    }

    /// Unreserved and reserved characters of RFC 3986 (sections 2.2 and 2.3).
    private static let allowed = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=".utf8))

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    /// The reference as a message shows it: quoted, at most 200 characters, control characters
    /// written as people read them (`ReadableText`).
    private static func quoted(_ reference: String) -> String {
        let cut = reference.unicodeScalars.count > 200
        let shown = cut ? String(String.UnicodeScalarView(reference.unicodeScalars.prefix(200))) : reference
        return "\"" + ReadableText.escaped(shown) + (cut ? "…" : "") + "\""
    }
}
