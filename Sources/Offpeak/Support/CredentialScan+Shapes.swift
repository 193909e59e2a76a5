/// The credential shapes `CredentialScan` recognizes without knowing the value: keys with a
/// vendor's prefix, and values after a name that says they are credentials.
///
/// Each shape asks for evidence that the text is a credential and not prose: a prefix at the start
/// of a word and a random-looking body (a digit or capital, or 32 characters); a value after a
/// name such as `x-api-key`, `"password"` or `client_secret`; a token after `Bearer` that holds a
/// digit. So `task-scheduler`, `sk-learn`, a 40-character hex cache key and a request id pass
/// through unchanged.
extension CredentialScan {
    struct PrefixRule {
        var prefix: [UInt8]
        /// Characters after the prefix, at least.
        var minimumBody: Int
        /// The body may hold dots (`ya29.…`, a JWT's three parts).
        var dots = false
    }

    static let prefixRules: [PrefixRule] = {
        var rules = [
            ("sk-", 8), ("sk_", 12), ("rk_live_", 10), ("rk_test_", 10), ("github_pat_", 20), ("glpat-", 16),
            ("AKIA", 16), ("ASIA", 16), ("AIza", 30), ("gsk_", 20), ("hf_", 20), ("xai-", 20),
            ("pplx-", 20), ("nvapi-", 20), ("r8_", 20), ("csk-", 20), ("npm_", 30), ("pypi-", 30),
            ("dop_v1_", 30), ("shpat_", 20), ("sq0atp-", 20), ("xapp-", 10),
        ].map { PrefixRule(prefix: Array($0.0.utf8), minimumBody: $0.1) }
        rules += ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"].map {
            PrefixRule(prefix: Array($0.utf8), minimumBody: 20)
        }
        rules += ["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-"].map {
            PrefixRule(prefix: Array($0.utf8), minimumBody: 10)
        }
        rules += [
            PrefixRule(prefix: Array("ya29.".utf8), minimumBody: 20, dots: true),
            PrefixRule(prefix: Array("SG.".utf8), minimumBody: 20, dots: true),
            PrefixRule(prefix: Array("eyJ".utf8), minimumBody: 20, dots: true),
        ]
        return rules
    }()

    /// Rule indices by the prefix's first byte.
    static let prefixRulesByFirstByte: [[Int]] = {
        var table = [[Int]](repeating: [], count: 256)
        for (index, rule) in prefixRules.enumerated() { table[Int(rule.prefix[0])].append(index) }
        return table
    }()

    /// A key with a known prefix, starting at a word boundary: the whole token.
    mutating func prefixedToken(at index: Int) -> Range<Int>? {
        for ruleIndex in Self.prefixRulesByFirstByte[Int(bytes[index])]
        where index >= prefixFailedUntil[ruleIndex] {
            let rule = Self.prefixRules[ruleIndex]
            guard bytes.count - index > rule.prefix.count,
                rule.prefix.indices.allSatisfy({ bytes[index + $0] == rule.prefix[$0] })
            else { continue }
            var end = index + rule.prefix.count
            var digits = 0
            var capitals = 0
            var dots = 0
            while end < bytes.count {
                let byte = bytes[end]
                if Self.isDigit(byte) {
                    digits += 1
                } else if Self.isUpper(byte) {
                    capitals += 1
                } else if byte == UInt8(ascii: ".") && rule.dots {
                    dots += 1
                } else if !Self.isIdentifier(byte) {
                    break
                }
                end += 1
            }
            while rule.dots, end > index, bytes[end - 1] == UInt8(ascii: ".") {
                end -= 1
                dots -= 1
            }
            let body = end - index - rule.prefix.count
            let isJWT = rule.prefix.first == UInt8(ascii: "e")
            if body >= rule.minimumBody, digits + capitals > 0 || body >= 32, !isJWT || dots >= 2 {
                return index..<end
            }
            prefixFailedUntil[ruleIndex] = end
        }
        return nil
    }

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
        guard var start = valueStart(after: end), let (kind, technical) = fieldKind(name) else { return nil }
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
                let value = credential..<valueEnd(from: credential)
                if !value.isEmpty, !isPlaceholder(value) { return value }
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

    /// Past the name's closing quote (`"`, `'`, `\"`), a `:`, `=` or `=>`, and spaces.
    private func valueStart(after end: Int) -> Int? {
        var index = end
        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), Self.isQuote(bytes[index + 1]) {
            index += 2
        } else if index < bytes.count, Self.isQuote(bytes[index]) {
            index += 1
        }
        while index < bytes.count, Self.isSpace(bytes[index]), index - end < 8 { index += 1 }
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") || bytes[index] == UInt8(ascii: "=")
        else { return nil }
        index += 1
        if index < bytes.count, bytes[index] == UInt8(ascii: ">") { index += 1 }
        let separator = index
        while index < bytes.count, Self.isSpace(bytes[index]), index - separator < 8 { index += 1 }
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
