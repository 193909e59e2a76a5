/// Writes canonical JSON by hand, byte for byte what `CanonicalJSON.text` (Foundation's
/// `JSONEncoder` with sorted keys and unescaped slashes) writes for the same values.
///
/// Requests are encoded on every submitted line and every planned item (their payload and their
/// cache key), and `JSONEncoder`'s general machinery costs several times the copying of their
/// text. A type with a fixed shape writes its members here, in sorted key order, instead; its tests
/// compare the result with `CanonicalJSON.text` so the two never drift (a drift would change cache
/// keys). The escapes are `JSONEncoder`'s: `\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`, other control
/// characters as `\u00xx` (lowercase hex), everything else as it is.
struct CanonicalJSONWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the object or array being written has a member yet (a comma goes before the next).
    private var hasMember: [Bool] = []
    /// A key was just written: the next value is its member's, with no comma before it.
    private var pendingValue = false

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// How many bytes are written: the offset the next one goes to.
    var count: Int { bytes.count }

    /// The JSON written, as text.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func beginObject() { open(UInt8(ascii: "{")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func beginArray() { open(UInt8(ascii: "[")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    /// A member's key; its value follows. Keys must come in sorted order and need no escapes.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        pendingValue = true
    }

    mutating func string(_ value: String) {
        separate()
        var value = value
        value.withUTF8 { appendEscaped($0) }
    }

    mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    mutating func int(_ value: Int) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// A finite double as `JSONEncoder` writes it (its description without a trailing `.0`).
    /// - Returns: false for NaN and infinities, which `JSONEncoder` refuses to encode.
    mutating func double(_ value: Double) -> Bool {
        guard value.isFinite else { return false }
        separate()
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
        return true
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        hasMember.append(false)
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        hasMember.removeLast()
    }

    /// Writes the comma before a value that is not the first of its object or array.
    private mutating func separate() {
        if pendingValue {
            pendingValue = false
            return
        }
        guard let last = hasMember.last else { return }
        if last { bytes.append(UInt8(ascii: ",")) }
        hasMember[hasMember.count - 1] = true
    }

    /// The string quoted and escaped.
    private mutating func appendEscaped(_ text: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        Self.appendEscaping(text, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// The inside of `text`'s JSON string (escaped, without the quotes) appended to `bytes`: what a
    /// `RequestTemplate` puts in its hole.
    static func appendEscaping(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendEscaping($0, to: &bytes) }
    }

    /// Runs of bytes that need no escape are copied whole, found a word (8 bytes) at a time, and a
    /// word holding one goes straight to it.
    private static func appendEscaping(_ text: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        var start = 0
        var index = 0
        let count = text.count
        while index < count {
            if index + 8 <= count, let base = text.baseAddress {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                let mask = escapeMask(UInt64(littleEndian: word))
                if mask == 0 {
                    index += 8
                    continue
                }
                index += mask.trailingZeroBitCount / 8
            } else {
                let byte = text[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                    index += 1
                    continue
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[start..<index]))
            appendEscape(text[index], to: &bytes)
            index += 1
            start = index
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[start..<count]))
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` (little-endian) that is below 0x20, a quote or a
    /// backslash. Bytes above one that is may be marked too (a borrow runs upward), but never
    /// below: the lowest mark is exactly the first byte that needs an escape.
    private static func escapeMask(_ word: UInt64) -> UInt64 {
        let control = (word &- ones &* 0x20) & ~word
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        return (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & highs
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    /// The escape `JSONEncoder` writes for `byte` (a quote, a backslash or a control character).
    private static func appendEscape(_ byte: UInt8, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0..<0x20:
            bytes.append(contentsOf: "u00".utf8)
            bytes.append(hexDigits.utf8Start[Int(byte >> 4)])
            bytes.append(hexDigits.utf8Start[Int(byte & 0x0F)])
        default: bytes.append(byte)
        }
    }
}
