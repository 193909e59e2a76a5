/// Credentials recognized by the name in front of them: `x-api-key: …`, `"api_key": "…"`,
/// `client_secret=…`, `Authorization: Bearer …`, and a token after `Bearer`.
///
/// Each asks for evidence that the value is a credential and not prose: a technical name
/// (`API_KEY`, `x-api-key`, `apiKey`) takes any value, a plain word (`password`, `token`) only a
/// value that looks random (a digit, or many characters), so `eos_token: </s>`, `max_tokens: 1024`
/// and "the secret: practice" pass through unchanged.
extension CredentialScan {
    enum FieldKind {
        /// `api_key`, `password`, `client_secret`…: any value is a credential.
        case secret
        /// `token`, `access_token`…: only a credential-looking value (`eos_token: </s>` is not).
        case token
        /// `Authorization`: the credential after a scheme word, or a credential-looking value.
        case authorization
    }

    static let fieldSuffixes: [(suffix: [UInt8], kind: FieldKind)] = {
        let names: [(String, FieldKind)] = [
            ("api_key", .secret), ("api-key", .secret), ("apikey", .secret), ("secret", .secret),
            ("secret_key", .secret), ("secret-key", .secret), ("secretkey", .secret), ("password", .secret),
            ("passwd", .secret), ("passphrase", .secret), ("private_key", .secret), ("private-key", .secret),
            ("access_key", .secret), ("access-key", .secret), ("subscription-key", .secret),
            ("subscription_key", .secret), ("token", .token), ("authorization", .authorization),
        ]
        return names.map { (Array($0.0.utf8), $0.1) }
    }()

    /// A value after a credential's name (`x-api-key: …`, `"api_key": "…"`, `token=…`,
    /// `Authorization: Bearer …`), or a token after `Bearer`.
    func namedField(at index: Int) -> Range<Int>? {
        var end = index
        while end < bytes.count, Self.isIdentifier(bytes[end]), end - index <= 64 { end += 1 }
        guard end - index <= 64 else { return nil }
        let name = index..<end
        if name.count == 6, endsWith(Self.bearer, name) { return bearerToken(after: end) }
        // The separator first: it is two byte checks, and most words in prose have none.
        // `('x-api-key', '…')`: a header list printed as Python tuples separates with a comma.
        let inTuple = index >= 2 && Self.isQuote(bytes[index - 1]) && bytes[index - 2] == UInt8(ascii: "(")
        guard var start = valueStart(after: end, commaSeparates: inTuple),
            let (kind, technical) = fieldKind(name)
        else { return nil }
        var quote: UInt8?
        var escaped = false
        if start + 1 < bytes.count, bytes[start] == UInt8(ascii: "\\"), Self.isQuote(bytes[start + 1]) {
            (quote, escaped) = (bytes[start + 1], true)
            start += 2
        } else if start < bytes.count, Self.isQuote(bytes[start]) {
            quote = bytes[start]
            start += 1
        }
        switch kind {
        case .secret:
            if let quote, let close = quotedEnd(from: start, quote: quote, escaped: escaped) {
                return close > start ? start..<close : nil
            }
            let value = start..<valueEnd(from: start)
            guard !value.isEmpty, !isPlaceholder(value) else { return nil }
            return technical || looksLikeCredential(value, minimum: 6, long: 16) ? value : nil
        case .token:
            let value = start..<valueEnd(from: start)
            return looksLikeCredential(value, minimum: 8, long: 32) ? value : nil
        case .authorization:
            var scheme = start
            while scheme < bytes.count, Self.isLetter(bytes[scheme]), scheme - start < 20 { scheme += 1 }
            var credential = scheme
            while credential < bytes.count, Self.isSpace(bytes[credential]) { credential += 1 }
            if scheme > start, credential > scheme {
                // `Bearer token` in documentation is a word; a credential is longer or has digits.
                let value = credential..<valueEnd(from: credential)
                if !value.isEmpty, !isPlaceholder(value), looksLikeCredential(value, minimum: 1, long: 8) {
                    return value
                }
            }
            let value = start..<valueEnd(from: start)
            return looksLikeCredential(value, minimum: 8, long: 32) ? value : nil
        }
    }

    private static let bearer = Array("bearer".utf8)

    /// Whether the name ends with `suffix` (compared in lower case).
    private func endsWith(_ suffix: [UInt8], _ name: Range<Int>) -> Bool {
        guard name.count >= suffix.count else { return false }
        let offset = name.upperBound - suffix.count
        for index in 0..<suffix.count where Self.lowercased(bytes[offset + index]) != suffix[index] {
            return false
        }
        return true
    }

    /// The kind of credential a name announces, and whether the name is technical (`API_KEY`,
    /// `x-api-key`, `apiKey`) rather than a plain word (`password`) that prose uses too. The
    /// suffix must start a word of the name: `client_secret`, `clientSecret`, not `clientsecret`.
    private func fieldKind(_ name: Range<Int>) -> (FieldKind, Bool)? {
        for (suffix, kind) in Self.fieldSuffixes where endsWith(suffix, name) {
            let start = name.upperBound - suffix.count
            let boundary =
                start == name.lowerBound || bytes[start - 1] == UInt8(ascii: "_")
                || bytes[start - 1] == UInt8(ascii: "-")
                || (Self.isUpper(bytes[start]) && !Self.isUpper(bytes[start - 1]))
            guard boundary else { continue }
            let technical =
                bytes[name].contains { !Self.isLetter($0) }
                || bytes[(name.lowerBound + 1)..<name.upperBound].contains(where: Self.isUpper)
            return (kind, technical)
        }
        return nil
    }

    /// Past the name's closing quote (`"`, `'`, `\"`), the separator (`:`, `=`, `=>`, `%3D`,
    /// `%3A`, or `,` in a tuple), spaces, and the `[` of a list of strings (`"X-Api-Key": ["…"]`).
    private func valueStart(after end: Int, commaSeparates: Bool) -> Int? {
        var index = end
        var quotedName = false
        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), Self.isQuote(bytes[index + 1]) {
            (index, quotedName) = (index + 2, true)
        } else if index < bytes.count, Self.isQuote(bytes[index]) {
            (index, quotedName) = (index + 1, true)
        }
        while index < bytes.count, Self.isSpace(bytes[index]), index - end < 8 { index += 1 }
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: ":"), UInt8(ascii: "="):
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: ">") { index += 1 }
        case UInt8(ascii: ",") where quotedName && commaSeparates:
            index += 1
        case UInt8(ascii: "%")
        where starts(with: "%3D", at: index) || starts(with: "%3d", at: index)
            || starts(with: "%3A", at: index) || starts(with: "%3a", at: index):
            index += 3
        default:
            return nil
        }
        let separator = index
        while index < bytes.count, Self.isSpace(bytes[index]), index - separator < 8 { index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: "[") {
            var element = index + 1
            while element < bytes.count, Self.isSpace(bytes[element]), element - index < 8 { element += 1 }
            if element < bytes.count, Self.isQuote(bytes[element]) || bytes[element] == UInt8(ascii: "\\") {
                index = element
            }
        }
        return index
    }

    /// The closing quote of a quoted value within 1 KiB on the same line; an escaped quote
    /// (`\"…\"`, JSON inside a JSON string) ends at the next backslash.
    private func quotedEnd(from start: Int, quote: UInt8, escaped: Bool) -> Int? {
        var index = start
        while index < bytes.count, index - start < 1024 {
            let byte = bytes[index]
            if byte == quote || (escaped && byte == UInt8(ascii: "\\")) { return index }
            if byte == 10 || byte == 13 { return nil }
            index += byte == UInt8(ascii: "\\") ? 2 : 1
        }
        return nil
    }

    /// The end of an unquoted value (or a quoted one that stops at whitespace), without a
    /// sentence's closing period.
    private func valueEnd(from start: Int) -> Int {
        var end = start
        while end < bytes.count, Self.isValueByte(bytes[end]) { end += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: ".") || bytes[end - 1] == UInt8(ascii: ":") {
            end -= 1
        }
        return end
    }

    /// `Bearer <token>` anywhere: the token, when it looks like one.
    private func bearerToken(after end: Int) -> Range<Int>? {
        var start = end
        while start < bytes.count, Self.isSpace(bytes[start]), start - end < 8 { start += 1 }
        guard start > end else { return nil }
        let value = start..<valueEnd(from: start)
        return looksLikeCredential(value, minimum: 8, long: 32) ? value : nil
    }

    /// Long enough, and random-looking: a digit, or many characters.
    private func looksLikeCredential(_ value: Range<Int>, minimum: Int, long: Int) -> Bool {
        guard value.count >= minimum else { return false }
        return value.count >= long || bytes[value].contains(where: Self.isDigit)
    }

    /// `$OPENAI_API_KEY` in documentation names a variable; it holds no credential.
    private func isPlaceholder(_ value: Range<Int>) -> Bool { bytes[value.lowerBound] == UInt8(ascii: "$") }

    static func isQuote(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") }
}
