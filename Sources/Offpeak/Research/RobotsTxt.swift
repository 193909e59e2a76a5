import Foundation

/// A site's robots.txt, read as RFC 9309 says, reduced to the rules for one crawler.
///
/// - Lines end in LF, CR or CRLF; `#` starts a comment; a leading byte-order mark is dropped;
///   only the first 500 KiB are read (`maxBytes`), up to the last whole line in them.
/// - A group is one or more `User-agent` lines and the rules after them. The groups whose product
///   token is the crawler's (compared case-insensitively) apply, combined; when none is, the `*`
///   groups do; when there are none of those either, everything is allowed.
/// - Of the `Allow` / `Disallow` rules whose pattern matches a URL's path and query, the longest
///   pattern wins, and `Allow` wins a tie; no match allows. An empty pattern matches nothing (so
///   an empty `Disallow:` allows all). `*` matches any run of characters and a final `$` the end.
/// - Patterns and paths are compared percent-encoded, the same way (`normalized`), so `/ä`,
///   `/%c3%a4` and `/%C3%A4` are one path, and `/%7Efoo` is `/~foo`.
struct RobotsTxt: Sendable, Equatable {
    /// RFC 9309 asks crawlers to read at least 500 kibibytes.
    static let maxBytes = 500 * 1024

    struct Rule: Sendable, Equatable {
        var allow: Bool
        /// Normalized; may hold `*` and end in `$`.
        var pattern: String
    }

    /// The rules that apply to the crawler, in the order they were written.
    let rules: [Rule]

    /// Nothing disallowed: what a missing robots.txt (a 4xx) means.
    static let allowingAll = RobotsTxt(rules: [])

    init(rules: [Rule]) {
        self.rules = rules
    }

    /// The rules `text` sets for the crawler named `product` (offpeak's is `offpeak`).
    init(_ text: String, product: String = "offpeak") {
        var groups: [(agents: [String], rules: [Rule])] = []
        var lastWasAgent = false
        for line in Self.lines(of: text) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch key {
            case "user-agent":
                if lastWasAgent, !groups.isEmpty {
                    groups[groups.count - 1].agents.append(Self.token(value))
                } else {
                    groups.append((agents: [Self.token(value)], rules: []))
                }
                lastWasAgent = true
            case "allow", "disallow":
                lastWasAgent = false
                // Rules before any user-agent line belong to no group.
                guard !groups.isEmpty, !value.isEmpty else { continue }
                groups[groups.count - 1].rules.append(
                    Rule(allow: key == "allow", pattern: Self.normalized(value)))
            default:
                // Sitemap, Crawl-delay and the like end no group and set no rule.
                continue
            }
        }
        let name = product.lowercased()
        let own = groups.filter { $0.agents.contains(name) }
        let chosen = own.isEmpty ? groups.filter { $0.agents.contains("*") } : own
        self.rules = chosen.flatMap(\.rules)
    }

    /// Whether the crawler may fetch `url` (absolute, or a path with its query); `/robots.txt`
    /// itself is always allowed.
    func allows(_ url: String) -> Bool {
        let path = Self.pathAndQuery(of: url)
        if path == "/robots.txt" { return true }
        var best: Rule?
        for rule in rules where Self.matches(rule.pattern, path) {
            guard let current = best else {
                best = rule
                continue
            }
            let length = rule.pattern.utf8.count
            let bestLength = current.pattern.utf8.count
            if length > bestLength || (length == bestLength && rule.allow && !current.allow) { best = rule }
        }
        return best?.allow ?? true
    }

    // MARK: Reading

    /// The lines of the first `maxBytes` of `text`, comments and the byte-order mark removed.
    static func lines(of text: String) -> [Substring] {
        var text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        if text.utf8.count > maxBytes {
            // Cut at the last line break inside the limit: half a rule could forbid too much.
            let head = Array(text.utf8.prefix(maxBytes))
            let end = head.lastIndex(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) ?? 0
            text = String(decoding: head[..<end], as: UTF8.self)
        }
        return text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
            .map { line in line.firstIndex(of: "#").map { line[..<$0] } ?? line }
    }

    /// A user-agent line's product token, lower-cased: its leading letters, `_` and `-`
    /// (`offpeak/1.0` is `offpeak`), or `*`.
    static func token(_ value: String) -> String {
        if value.hasPrefix("*") { return "*" }
        return String(value.prefix { $0.isASCII && ($0.isLetter || $0 == "_" || $0 == "-") }).lowercased()
    }

    /// The path and query of an absolute URL (`/` when the path is empty; the fragment dropped),
    /// or of `url` as it is when it is already a path.
    static func pathAndQuery(of url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") {
            rest = rest[scheme.upperBound...]
            rest = rest.firstIndex(where: { "/?#".contains($0) }).map { rest[$0...] } ?? ""
        }
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        return normalized(rest.hasPrefix("/") ? String(rest) : "/" + rest)
    }

    // MARK: Matching

    /// `text` with every byte outside printable ASCII percent-encoded, every escape of an
    /// unreserved character decoded and every other escape in upper case: one spelling per path.
    static func normalized(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var out = ""
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
                let low = hexValue(bytes[index + 2])
            {
                let value = high << 4 | low
                if isUnreserved(value) {
                    out.unicodeScalars.append(Unicode.Scalar(value))
                } else {
                    out += escaped(value)
                }
                index += 3
                continue
            }
            if byte > 0x20 && byte < 0x7F {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += escaped(byte)
            }
            index += 1
        }
        return out
    }

    /// `%` and the byte in two upper-case hex digits.
    private static func escaped(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".unicodeScalars)
        return "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default: return false
        }
    }

    /// Whether `pattern` matches the start of `path` (all of it, with a final `$`); `*` matches
    /// any run of bytes. Greedy with one backtrack point, so linear for usual patterns.
    static func matches(_ pattern: String, _ path: String) -> Bool {
        var pattern = Array(pattern.utf8)
        let anchored = pattern.last == UInt8(ascii: "$")
        if anchored { pattern.removeLast() }
        let path = Array(path.utf8)
        let star = UInt8(ascii: "*")
        var p = 0
        var s = 0
        var backtrack: (pattern: Int, path: Int)?
        while true {
            if p == pattern.count {
                if !anchored || s == path.count { return true }
            } else if pattern[p] == star {
                backtrack = (p + 1, s)
                p += 1
                continue
            } else if s < path.count, pattern[p] == path[s] {
                p += 1
                s += 1
                continue
            }
            // A mismatch (or an anchored end not reached): let the last `*` take one more byte.
            guard let last = backtrack, last.path < path.count else { return false }
            backtrack = (last.pattern, last.path + 1)
            p = last.pattern
            s = last.path + 1
        }
    }
}
