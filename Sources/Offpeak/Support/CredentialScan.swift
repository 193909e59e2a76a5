/// One pass of `Redactor` over a text's UTF-8 bytes: at each position it tries the known secrets,
/// then the credential shapes, and copies the text with every match replaced by the marker.
///
/// Every rule looks ahead a bounded distance or consumes what it read, and a prefix rule that
/// failed on a run of token characters is not tried again inside that run, so the pass is linear
/// in the text whatever it holds (a 2 MiB page of `sk-sk-sk-…` included).
struct CredentialScan {
    let bytes: UnsafeBufferPointer<UInt8>
    let secretsByFirstByte: [[[UInt8]]]
    let startFlags: [UInt8]
    private var output: [UInt8] = []
    private var copied = 0
    private var changed = false
    /// Per prefix rule, the end of the run it last failed on: no start inside that run can match.
    var prefixFailedUntil: [Int]

    static let marker = Array(Redactor.marker.utf8)

    init(bytes: UnsafeBufferPointer<UInt8>, secretsByFirstByte: [[[UInt8]]], startFlags: [UInt8]) {
        self.bytes = bytes
        self.secretsByFirstByte = secretsByFirstByte
        self.startFlags = startFlags
        prefixFailedUntil = [Int](repeating: 0, count: Self.prefixRules.count)
    }

    /// The redacted text, or nil when nothing was redacted.
    mutating func run() -> String? {
        // Most bytes (inside a word, spaces) can start nothing: one table lookup passes them by.
        let starts = startFlags
        var index = 0
        var previous = UInt8(ascii: " ")
        while index < bytes.count {
            let byte = bytes[index]
            let flags = starts[Int(byte)]
            let candidate =
                flags & (Self.startsSecret | Self.startsSpecial) != 0
                || (flags & Self.startsPrefix != 0 && !Self.isAlphanumeric(previous))
                || (flags & Self.startsName != 0
                    && (!Self.isIdentifier(previous) || afterPercentEscape(index)))
            if candidate, let range = match(at: index, previous: previous), range.upperBound > index {
                replace(range)
                index = range.upperBound
                previous = bytes[index - 1]
            } else {
                previous = byte
                index += 1
            }
        }
        guard changed else { return nil }
        output.append(contentsOf: bytes[copied..<bytes.count])
        return String(decoding: output, as: UTF8.self)
    }

    private mutating func replace(_ range: Range<Int>) {
        if !changed {
            output.reserveCapacity(bytes.count)
            changed = true
        }
        output.append(contentsOf: bytes[copied..<range.lowerBound])
        output.append(contentsOf: Self.marker)
        copied = range.upperBound
    }

    /// What to replace for a credential found at `index` (it may start after `index`: a field's
    /// value after its name), or nil.
    private mutating func match(at index: Int, previous: UInt8) -> Range<Int>? {
        let byte = bytes[index]
        if let range = knownSecret(at: index) { return range }
        if byte == UInt8(ascii: ":"), let range = userInfo(after: index) { return range }
        if byte == UInt8(ascii: "-"), let range = privateKeyBlock(at: index) { return range }
        if !Self.isAlphanumeric(previous), let range = prefixedToken(at: index) { return range }
        if Self.isIdentifier(byte), !Self.isDigit(byte),
            !Self.isIdentifier(previous) || afterPercentEscape(index)
        {
            return namedField(at: index)
        }
        return nil
    }

    /// Bits of `startFlags`: what a byte may start.
    static let startsSecret: UInt8 = 1
    static let startsPrefix: UInt8 = 2
    static let startsName: UInt8 = 4
    static let startsSpecial: UInt8 = 8

    /// Per byte value, what it may start: a known secret, a prefixed key, a name (a letter, or the
    /// `-`/`_` of `--api-key`), or user-info (`:`) and private keys (`-`).
    static func startFlags(secretsByFirstByte: [[[UInt8]]]) -> [UInt8] {
        (0..<256).map { value in
            let byte = UInt8(value)
            var flags: UInt8 = 0
            if !secretsByFirstByte[value].isEmpty { flags |= startsSecret }
            if !prefixRulesByFirstByte[value].isEmpty { flags |= startsPrefix }
            if isIdentifier(byte) && !isDigit(byte) { flags |= startsName }
            if byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-") { flags |= startsSpecial }
            return flags
        }
    }

    /// Right after `%XX`: in a percent-encoded query (`%3Fapi_key%3D…`) a name follows an escape.
    private func afterPercentEscape(_ index: Int) -> Bool {
        index >= 3 && bytes[index - 3] == UInt8(ascii: "%")
    }

    // MARK: Known secrets

    private func knownSecret(at index: Int) -> Range<Int>? {
        let remaining = bytes.count - index
        for secret in secretsByFirstByte[Int(bytes[index])] where secret.count <= remaining {
            var offset = 1
            while offset < secret.count, bytes[index + offset] == secret[offset] { offset += 1 }
            if offset == secret.count { return index..<(index + offset) }
        }
        return nil
    }

    // MARK: URL user-info and private keys

    /// `scheme://user:password@host` (also JSON-escaped, `:\/\/`): the part before the `@`.
    private func userInfo(after colon: Int) -> Range<Int>? {
        let start: Int
        if starts(with: "//", at: colon + 1) {
            start = colon + 3
        } else if starts(with: "\\/\\/", at: colon + 1) {
            start = colon + 5
        } else {
            return nil
        }
        var index = start
        var lastAt: Int?
        while index < bytes.count, index - start < 256 {
            let byte = bytes[index]
            if byte == UInt8(ascii: "@") {
                lastAt = index
            } else if !Self.isValueByte(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") {
                break
            }
            index += 1
        }
        guard let lastAt, lastAt > start else { return nil }
        return start..<lastAt
    }

    /// `-----BEGIN … PRIVATE KEY-----`, its base64 lines (raw or with `\n` escapes) and the END line.
    private func privateKeyBlock(at index: Int) -> Range<Int>? {
        guard starts(with: "-----BEGIN ", at: index) else { return nil }
        var header = index + 11
        let limit = min(bytes.count, header + 80)
        while header < limit, !starts(with: "PRIVATE KEY", at: header) { header += 1 }
        guard header < limit else { return nil }
        var end = header + 11
        while end < limit, !starts(with: "-----", at: end) { end += 1 }
        guard end < limit else { return nil }
        end += 5
        while end < bytes.count {
            let byte = bytes[end]
            if Self.isAlphanumeric(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
                || byte == UInt8(ascii: "=") || Self.isSpace(byte) || byte == 10 || byte == 13
            {
                end += 1
            } else if byte == UInt8(ascii: "\\"), end + 1 < bytes.count,
                bytes[end + 1] == UInt8(ascii: "n") || bytes[end + 1] == UInt8(ascii: "r")
            {
                end += 2
            } else {
                break
            }
        }
        if starts(with: "-----END", at: end) {
            var close = end + 8
            let limit = min(bytes.count, close + 80)
            while close < limit, !starts(with: "-----", at: close) { close += 1 }
            if close < limit { end = close + 5 }
        }
        return index..<end
    }

    // MARK: Bytes

    func starts(with text: StaticString, at index: Int) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index >= 0, index + count <= bytes.count else { return false }
        let pointer = text.utf8Start
        for offset in 0..<count where bytes[index + offset] != pointer[offset] { return false }
        return true
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte &- 48 < 10 }
    static func isUpper(_ byte: UInt8) -> Bool { byte &- 65 < 26 }
    static func isLower(_ byte: UInt8) -> Bool { byte &- 97 < 26 }
    static func isLetter(_ byte: UInt8) -> Bool { isUpper(byte) || isLower(byte) }
    static func isAlphanumeric(_ byte: UInt8) -> Bool { isLetter(byte) || isDigit(byte) }
    static func isSpace(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 }
    static func lowercased(_ byte: UInt8) -> UInt8 { isUpper(byte) ? byte + 32 : byte }

    /// Letters, digits, `_` and `-`: what names and most keys are made of.
    static func isIdentifier(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    /// A byte an unquoted credential may hold: printable ASCII except quotes, brackets and the
    /// separators that end a value in headers, JSON, query strings and prose.
    static func isValueByte(_ byte: UInt8) -> Bool {
        guard byte > 32, byte < 127 else { return false }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "`"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "\\"),
            UInt8(ascii: "#"):
            return false
        default: return true
        }
    }
}
