import Foundation

/// Removes credentials from text that came from outside (provider errors and answers, fetched
/// pages, fetch errors) before it is stored, logged or printed.
///
/// Servers and proxies sometimes echo the request in an error, headers and all, so an API key can
/// come back in text offpeak would otherwise keep verbatim. Two things are replaced by `marker`:
///
/// - the values of the credential variables in the environment (`ANTHROPIC_API_KEY`,
///   `OPENAI_API_KEY`, and any `*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD`, `*_KEY`), as
///   written and as they look JSON-escaped or percent-encoded, plus the password of any URL held
///   in the environment (`HTTPS_PROXY=http://user:pass@proxy`);
/// - anything shaped like a credential, whoever's it is (`CredentialScan`): `sk-…` style keys,
///   `Bearer …`, `x-api-key: …` and `Authorization: …` values, `"api_key": "…"` and
///   `?access_token=…` fields, URL user-info, private-key blocks.
///
/// One pass over the UTF-8 bytes with bounded look-ahead: linear in the text, with no regular
/// expressions to go quadratic on a hostile page, and no copy at all when nothing matches.
struct Redactor: Sendable {
    /// What a credential is replaced with.
    static let marker = "[redacted]"
    /// Values shorter than this are not treated as secrets: they would be ordinary words.
    static let minimumSecretLength = 8
    /// The keys offpeak itself sends; a shorter value (from 6 characters) still counts for these.
    static let heldKeys: Set<String> = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]

    /// Every form of every known secret, grouped by first byte, longest first.
    let secretsByFirstByte: [[[UInt8]]]
    /// What each byte value may start (`CredentialScan.startFlags`).
    let startFlags: [UInt8]

    /// Only the credential shapes, with no known values: for text when no environment is at hand.
    static let shapes = Redactor(secrets: [])

    /// Redacts the credential variables of `environment` and every credential shape.
    init(environment: [String: String]) {
        var secrets: [String] = []
        for (name, value) in environment {
            let value = value.trimmingCharacters(in: .whitespacesAndNewlines)
            if Self.isCredentialVariable(name),
                Self.isSecretValue(value, held: Self.heldKeys.contains(name.uppercased()))
            {
                secrets.append(value)
            }
            if let password = Self.urlPassword(in: value), password.count >= 6 { secrets.append(password) }
        }
        self.init(secrets: secrets)
    }

    /// Redacts these values (each in its literal, JSON-escaped and percent-encoded forms) and every
    /// credential shape.
    init(secrets: [String]) {
        var buckets = [[[UInt8]]](repeating: [], count: 256)
        var seen: Set<[UInt8]> = []
        for secret in secrets where !secret.isEmpty {
            for form in Self.forms(of: secret) {
                let bytes = Array(form.utf8)
                guard let first = bytes.first, seen.insert(bytes).inserted else { continue }
                buckets[Int(first)].append(bytes)
            }
        }
        secretsByFirstByte = buckets.map { $0.sorted { $0.count > $1.count } }
        startFlags = CredentialScan.startFlags(secretsByFirstByte: secretsByFirstByte)
    }

    /// `text` with every credential replaced by `marker`; the same string when there is none.
    ///
    /// A NUL becomes U+FFFD too: the store binds text up to its first NUL, so an answer or an error
    /// holding one would be cut short without a word.
    func redact(_ text: String) -> String {
        guard !text.isEmpty else { return text }
        var text = text
        let redacted = text.withUTF8 { bytes in
            var scan = CredentialScan(
                bytes: bytes, secretsByFirstByte: secretsByFirstByte, startFlags: startFlags)
            return scan.run()
        }
        let clean = redacted ?? text
        return clean.utf8.contains(0) ? clean.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : clean
    }

    /// Whether a variable's name says it holds a credential: a `_`-separated part that is
    /// `TOKEN`, `SECRET`, `PASSWORD`, `APIKEY`…, or a name ending in `_KEY` or `PASSWORD`.
    /// (`TOKENIZERS_PARALLELISM` and `KEYBOARD` are not.)
    static func isCredentialVariable(_ name: String) -> Bool {
        let name = name.uppercased()
        let parts = Set(name.split(separator: "_").map(String.init))
        let words: Set<String> = [
            "TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIALS", "PAT", "PASSPHRASE",
        ]
        if !parts.isDisjoint(with: words) { return true }
        return name.hasSuffix("_KEY") || name.hasSuffix("PASSWORD") || name.hasSuffix("TOKEN")
            || name.hasSuffix("SECRET")
    }

    /// Whether a credential variable's value is worth hunting for: long enough, on one line, and
    /// not a plain word (`disabled`, `required`) that ordinary text would contain.
    static func isSecretValue(_ value: String, held: Bool) -> Bool {
        guard value.count >= (held ? 6 : minimumSecretLength), !value.contains(where: \.isWhitespace)
        else { return false }
        return value.count >= 16 || value.contains { !$0.isLetter }
    }

    /// The password of a URL with user-info (`scheme://user:password@host`), if it has one.
    static func urlPassword(in value: String) -> String? {
        guard let scheme = value.range(of: "://") else { return nil }
        let rest = value[scheme.upperBound...]
        let authority = rest.prefix { !"/?#".contains($0) }
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
            return nil
        }
        let password = authority[authority.index(after: colon)..<at]
        return String(password).removingPercentEncoding ?? String(password)
    }

    /// A secret as it appears written out, escaped in a JSON string (with and without `\/`, and
    /// with `<`, `>`, `&` as `\u003c`… the way Go writes them), and percent-encoded (either case
    /// of hex digits).
    static func forms(of secret: String) -> [String] {
        var json = ""
        for scalar in secret.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case "\n": json += "\\n"
            case "\r": json += "\\r"
            case "\t": json += "\\t"
            case _ where scalar.value < 0x20: json += String(format: "\\u%04x", scalar.value)
            default: json.unicodeScalars.append(scalar)
            }
        }
        let goStyle = json.replacingOccurrences(of: "<", with: "\\u003c")
            .replacingOccurrences(of: ">", with: "\\u003e").replacingOccurrences(of: "&", with: "\\u0026")
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let percent = secret.addingPercentEncoding(withAllowedCharacters: unreserved) ?? secret
        let lowerPercent = Self.lowercasingPercentEscapes(percent)
        let forms = [
            secret, json, json.replacingOccurrences(of: "/", with: "\\/"), goStyle, percent, lowerPercent,
        ]
        var unique: [String] = []
        for form in forms where !unique.contains(form) { unique.append(form) }
        return unique
    }

    /// `%2F` as `%2f`: both spellings are valid and servers echo either.
    private static func lowercasingPercentEscapes(_ text: String) -> String {
        var result = ""
        var remaining = 0
        for character in text {
            if character == "%" {
                remaining = 2
                result.append(character)
            } else if remaining > 0 {
                remaining -= 1
                result += character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }
}
