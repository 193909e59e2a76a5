import Foundation

/// Where a PostgreSQL store is, read from a `postgresql://` URL the way libpq reads one:
/// `postgresql://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=…&application_name=…&connect_timeout=…`.
///
/// Both `postgresql://` and `postgres://` are taken; every part is percent-decoded; the port is 5432,
/// the user the OS user and the database the user's name when they are left out. Parameters other
/// than the three offpeak uses are refused by name, not ignored: a typo in `sslmode` must not
/// quietly connect without TLS. The password, if the URL has one, is kept in a `PostgresPassword`,
/// which never prints; `description` is the URL without it.
struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    var user: String
    var password: PostgresPassword?
    var host: String
    var port: Int
    var database: String
    var sslMode: SSLMode = .prefer
    var applicationName: String = PostgresURL.defaultApplicationName
    /// Seconds to wait for the connection; `nil`: the client's default (10 s). libpq's `0` (wait
    /// without end) is taken as a day.
    var connectTimeout: Int?

    static let defaultPort = 5432
    static let defaultApplicationName = "offpeak"
    static let schemes = ["postgresql", "postgres"]
    static let parameters = ["sslmode", "application_name", "connect_timeout"]

    /// libpq's `sslmode`: whether TLS is tried, required, and what of the server's certificate is checked.
    enum SSLMode: String, Sendable, CaseIterable {
        /// Plain TCP only.
        case disable
        /// TLS when the server offers it, else plain; the certificate is not checked (libpq's default).
        case prefer
        /// TLS or nothing; the certificate is not checked.
        case require
        /// TLS with a certificate signed by a trusted authority, whatever name it carries.
        case verifyCA = "verify-ca"
        /// TLS with a trusted certificate for this host name.
        case verifyFull = "verify-full"
    }

    /// `host:port`, as every fault names it (an IPv6 address in brackets).
    var endpoint: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The URL with its password left out, parameters that differ from the defaults kept.
    var description: String {
        var text = "postgresql://\(Self.encoded(user))@"
        text += host.contains(":") ? "[\(host)]" : Self.encoded(host)
        text += ":\(port)/\(Self.encoded(database))"
        var query: [String] = []
        if sslMode != .prefer { query.append("sslmode=\(sslMode.rawValue)") }
        if applicationName != Self.defaultApplicationName {
            query.append("application_name=\(Self.encoded(applicationName))")
        }
        if let connectTimeout { query.append("connect_timeout=\(connectTimeout)") }
        return query.isEmpty ? text : text + "?" + query.joined(separator: "&")
    }

    /// Whether `text` is meant as a PostgreSQL URL (its scheme), so a mistake in one is reported as
    /// one rather than as an unknown store.
    static func looksLikeURL(_ text: String) -> Bool {
        schemes.contains { text.lowercased().hasPrefix("\($0)://") }
    }

    /// Parses a URL; `defaultUser` is the OS user (the caller reads it, so tests choose it).
    /// - Throws: `Problem`, a sentence that never contains the password.
    static func parse(_ text: String, defaultUser: String) throws(Problem) -> PostgresURL {
        guard let schemeEnd = text.range(of: "://"),
            schemes.contains(text[..<schemeEnd.lowerBound].lowercased())
        else {
            throw Problem("expected a postgresql:// or postgres:// URL")
        }
        var rest = text[schemeEnd.upperBound...]
        var query = Substring("")
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        if rest.contains("#") { throw Problem("a fragment (#…) has no meaning in a PostgreSQL URL") }
        var path = Substring("")
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var user: String?
        var password: PostgresPassword?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try decoded(userInfo[..<colon], "the user name")
                password = PostgresPassword(
                    try decoded(userInfo[userInfo.index(after: colon)...], "the password"))
            } else {
                user = try decoded(userInfo, "the user name")
            }
        }
        let (host, port) = try hostAndPort(rest)
        let database = try decoded(path, "the database name")
        if database.contains("/") { throw Problem("the database name '\(database)' contains a '/'") }
        let resolvedUser = (user?.isEmpty ?? true) ? defaultUser : (user ?? defaultUser)
        var url = PostgresURL(
            user: resolvedUser, password: password, host: host, port: port,
            database: database.isEmpty ? resolvedUser : database)
        try url.apply(query: query)
        return url
    }

    /// `HOST`, `HOST:PORT`, `[IPv6]` or `[IPv6]:PORT`; no host is `localhost`.
    private static func hostAndPort(_ text: Substring) throws(Problem) -> (String, Int) {
        var hostText = text
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw Problem("'[' opens an IPv6 address that ']' never closes")
            }
            hostText = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw Problem("expected ':PORT' after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            hostText = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        if hostText.contains(",") { throw Problem("several hosts are not supported; name one") }
        let host = try decoded(hostText, "the host")
        var port = defaultPort
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number),
                portText.allSatisfy(\.isASCIIDigit)
            else { throw Problem("the port '\(portText)' is not a number from 1 to 65535") }
            port = number
        }
        if host.hasPrefix("/") {
            throw Problem("a unix socket folder as host is not supported; name a TCP host")
        }
        return (host.isEmpty ? "localhost" : host, port)
    }

    /// `sslmode`, `application_name`, `connect_timeout`; anything else is refused by name.
    private mutating func apply(query: Substring) throws(Problem) {
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.decoded(parts[0], "a parameter name")
            let value = try Self.decoded(parts.count > 1 ? parts[1] : "", "the value of \(name)")
            switch name {
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    let modes = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw Problem("sslmode '\(value)' is not one of \(modes)")
                }
                sslMode = mode
            case "application_name":
                guard !value.isEmpty, value.utf8.count < 64, value.allSatisfy({ $0.isASCII && !$0.isNewline })
                else {
                    throw Problem("application_name must be 1 to 63 ASCII characters on one line")
                }
                applicationName = value
            case "connect_timeout":
                guard let seconds = Int(value), seconds >= 0, seconds <= 86_400 else {
                    throw Problem(
                        "connect_timeout '\(value)' is not a whole number of seconds from 0 to 86400")
                }
                // As libpq: 0 waits without end (here, a day); 1 is taken as 2.
                connectTimeout = seconds == 0 ? 86_400 : max(seconds, 2)
            default:
                let known = Self.parameters.joined(separator: ", ")
                throw Problem("unknown parameter '\(name)' (offpeak takes \(known))")
            }
        }
    }

    /// Percent-decodes one part; a malformed escape names the part, never its text (it may be the password).
    private static func decoded(_ part: Substring, _ what: String) throws(Problem) -> String {
        guard part.contains("%") else { return String(part) }
        guard let text = String(part).removingPercentEncoding else {
            throw Problem("\(what) has a malformed %-escape")
        }
        return text
    }

    /// Percent-encodes what would break the URL's structure when printed.
    private static func encoded(_ text: String) -> String {
        var allowed = CharacterSet.urlUserAllowed
        allowed.remove(charactersIn: ":@/?#[]&=%")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// What is wrong with a URL, as a sentence the caller places (a file location, a variable).
    struct Problem: Error, Equatable, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// A password: kept for the connection, never shown. Its `description`, `debugDescription` and
/// mirror say `[redacted]`, so no interpolation, `dump` or error text can print it by accident.
struct PostgresPassword: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The password itself, for the connection's authentication only.
    let revealed: String

    init(_ revealed: String) { self.revealed = revealed }

    var description: String { "[redacted]" }
    var debugDescription: String { "[redacted]" }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
