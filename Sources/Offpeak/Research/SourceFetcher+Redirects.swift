import Foundation

extension SourceFetcher {
    /// What following a URL's redirects came to.
    struct Followed: Sendable, Equatable {
        /// The copy (stamped with the URL asked for, whatever URL answered), `.notModified`, or
        /// why there is neither.
        var outcome: Result<FetchOutcome, SourceError>
        /// Where the URL has moved for good: the target of the `301` / `308` hops it started with
        /// (the last of them), or the URL the walk started from when that was not the URL itself.
        /// `nil` when it has not moved, or when the target holds something redaction would change.
        var movedTo: String?
    }

    /// Fetches `url` one request per hop, following up to `maxRedirects` redirects to http and
    /// https URLs (a relative `Location` resolved against the hop it came from). Every hop,
    /// the first included, is put to `check` before it is requested: a `SourceError` it returns
    /// ends the walk with that error, and nothing more is requested.
    ///
    /// - Parameters:
    ///   - start: where to ask first instead of `url`: where it was last seen to have moved. The
    ///     copy and every error still name `url`.
    ///   - etag, lastModified: sent on every hop, so a moved page can still answer `304`.
    /// - Throws: only what `check` throws.
    func follow<Failure: Error>(
        _ url: String, from start: String? = nil, etag: String? = nil, lastModified: String? = nil,
        now: Date = Date(), cancellation: CancellationFlag? = nil, asSent: Bool = false,
        check: (String) throws(Failure) -> SourceError?
    ) throws(Failure) -> Followed {
        // Errors name the URL as the user wrote it, less any credential in it (`user:pass@`, `?key=`).
        let shown = redactor.redact(url)
        var current = start ?? url
        var movedTo = start == url ? nil : start
        var stillPermanent = true
        var hops = 0
        while true {
            if let refused = try check(current) {
                return Followed(outcome: .failure(refused), movedTo: movedTo)
            }
            let hop: Hop
            do {
                hop = try exchange(
                    current, for: url, shown: shown, etag: etag, lastModified: lastModified, now: now,
                    cancellation: cancellation, asSent: asSent)
            } catch {
                return Followed(outcome: .failure(error), movedTo: movedTo)
            }
            switch hop {
            case .answered(var outcome):
                if case .fetched(var source) = outcome {
                    source.movedTo = movedTo
                    outcome = .fetched(source)
                }
                return Followed(outcome: .success(outcome), movedTo: movedTo)
            case .redirect(let status, let location, let response):
                guard hops < maxRedirects else {
                    return Followed(
                        outcome: .failure(.http(shown, status, reason: reason(in: response))),
                        movedTo: movedTo)
                }
                guard let target = Self.target(of: location, from: current) else {
                    let why = "redirected to a URL that is not http or https"
                    return Followed(outcome: .failure(.http(shown, status, reason: why)), movedTo: movedTo)
                }
                hops += 1
                stillPermanent = stillPermanent && (status == 301 || status == 308)
                // Kept only as it was sent: a redacted URL would point somewhere else.
                if stillPermanent { movedTo = redactor.redact(target) == target ? target : nil }
                current = target
            }
        }
    }

    /// `location` resolved against `base`, if it is an http or https URL with a host.
    static func target(of location: String, from base: String) -> String? {
        guard let resolved = URL(string: location, relativeTo: URL(string: base))?.absoluteURL,
            let scheme = resolved.scheme?.lowercased(), scheme == "http" || scheme == "https",
            resolved.host?.isEmpty == false
        else { return nil }
        return resolved.absoluteString
    }

    /// `scheme://host[:port]` of an http or https URL, lower-cased, the default port left out:
    /// the site a robots.txt speaks for and the server the host gate counts requests to.
    static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", var host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }
        let defaultPort = scheme == "http" ? 80 : 443
        let port = components.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? ""
        return "\(scheme)://\(host)\(port)"
    }
}
