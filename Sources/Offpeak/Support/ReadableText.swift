/// Text a user handed us (a spool file's name, an id, a path in a message) shown so it can be read
/// and cannot garble what prints it: control characters written the way people write them in C,
/// shells and JSON (`\n`, `\t`, `\x1b`), and bytes that are not UTF-8 as `\xff`.
///
/// Swift's own escapes (`"\u{a}"`, from `debugDescription`) are for Swift programmers; a user
/// reads `new\nline.txt`. Only control characters are written out: a backslash stays as it is, so
/// text shown once and shown again does not change (a name that is not UTF-8 is kept in the store
/// as its shown form, then shown again).
///
/// Structured output (`--json`) carries the text itself; the JSON encoder escapes it the ordinary
/// way (`"new\nline.txt"`).
enum ReadableText {
    /// `text` with its control characters written out.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars { append(scalar, to: &out) }
        return out
    }

    /// `bytes` as text, control characters written out and each byte that does not belong to a
    /// UTF-8 character as `\xNN`: a name that is refused for not being text is still shown.
    static func escaped(bytes: [UInt8]) -> String {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        var out = ""
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                append(Unicode.UTF8.decode(encoded), to: &out)
                offset += encoded.count
            case .error(let length):
                for byte in bytes[offset..<offset + length] { out += "\\x" + hex(UInt32(byte), digits: 2) }
                offset += length
            case .emptyInput: return out
            }
        }
    }

    /// C0 and C1 controls, DEL, and the line and paragraph separators: what moves a terminal's
    /// cursor, starts an escape sequence or breaks a line.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }

    /// C0 controls and DEL as `\xNN` (a byte, as in C and shells); the others, which are more than
    /// one byte in UTF-8, as `\uNNNN` (JSON's and JavaScript's form), so neither reads as a byte.
    private static func append(_ scalar: Unicode.Scalar, to out: inout String) {
        guard isControl(scalar) else {
            out.unicodeScalars.append(scalar)
            return
        }
        switch scalar {
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            out +=
                scalar.value < 0x80
                ? "\\x" + hex(scalar.value, digits: 2) : "\\u" + hex(scalar.value, digits: 4)
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
