import Foundation

/// The text rules of intake: a line is taken as exactly the bytes it has, and an id is printable
/// text. Nothing is repaired or cut quietly: a line that is not UTF-8 or an id with a control
/// character is refused, naming where.
extension Submission {
    /// Parses one line of bytes (a line of stdin or of a spool `.jsonl` file, without its `\n`).
    /// - Returns: the submission, or `nil` for a blank line.
    /// - Throws: `OffpeakError` (65) naming `location` (and the column of a byte that is not UTF-8).
    static func parse(line bytes: some Collection<UInt8>, location: String, spec: JobSpec)
        throws(OffpeakError) -> Submission?
    {
        var bytes = Array(bytes)
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        // Validated by the standard library's fast path; the column is looked for only when it fails.
        guard let line = String(validating: bytes, as: UTF8.self) else {
            let bad = UTF8Text.firstInvalidByte(in: bytes) ?? 0
            let byte = String(bytes[bad], radix: 16, uppercase: true)
            throw OffpeakError(
                .dataError, "not valid UTF-8 (byte 0x\(byte.count == 1 ? "0" + byte : byte))",
                location: "\(location):\(bad + 1)")
        }
        if line.allSatisfy(\.isWhitespace) { return nil }
        return try parse(line, location: location, spec: spec)
    }

    /// The refusal of a line (or a spool file taken as one request) of `bytes` bytes, over
    /// `ValueLimits.lineBytes`: named by where it is, with the limit.
    static func tooLong(bytes: Int, location: String, what: String = "line") -> OffpeakError {
        OffpeakError(
            .dataError,
            "a \(what) of \(bytes) bytes; a request may be at most \(ValueLimits.lineBytes) bytes "
                + "(\(ValueLimits.lineBytesText)), more than any provider takes",
            location: location)
    }

    /// Why `id` cannot be an id, or `nil`. An id is matched exactly, stored, printed in tables and
    /// named in file names, so it is printable text: a NUL would cut it short in SQLite (GRDB binds
    /// text up to the first NUL), and line breaks or escapes would garble what prints it.
    static func problem(withID id: String) -> String? {
        guard !id.isEmpty else { return "expected a non-empty string" }
        for (index, scalar) in id.unicodeScalars.enumerated() where ReadableText.isControl(scalar) {
            return "control character \(codePoint(scalar)) at position \(index + 1); an id is printable text"
        }
        return nil
    }

    /// `id` in quotes for a message, shortened when long, control characters written out.
    static func quoted(_ id: String) -> String {
        let limit = 60
        return "\"" + ReadableText.escaped(id.count > limit ? String(id.prefix(limit)) + "…" : id) + "\""
    }

    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
