import Foundation

/// Bytes that must be UTF-8 text: job specs, `offpeak.yaml`, the prices file, documents to
/// summarize.
///
/// "Not valid UTF-8" alone leaves a user searching a file by eye; this names the line and column of
/// the first byte that is wrong, and says UTF-16 when that is what the file is (a byte-order mark,
/// or every other byte NUL), since converting the whole file is then the fix.
enum UTF8Text {
    /// Why and where bytes are not UTF-8 text.
    struct Problem: Error, Equatable, CustomStringConvertible {
        /// 1-based, counting characters; a UTF-16 file is reported at 1:1.
        var line: Int
        var column: Int
        /// What is wrong, for the message after the location.
        var description: String
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The text of `data` (a leading UTF-8 byte-order mark dropped), or where it stops being text.
    /// A NUL byte counts as not text: no YAML, JSON or document we read may hold one, and it is
    /// what UTF-16 looks like to a UTF-8 reader.
    static func decode(_ data: Data) -> Result<String, Problem> {
        let bytes = data.starts(with: byteOrderMark) ? data.dropFirst(byteOrderMark.count) : data[...]
        if !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) { return .success(text) }
        if let utf16 = utf16Kind(of: data) {
            let problem = "the file is UTF-16 text (\(utf16)), not UTF-8; save it as UTF-8"
            return .failure(Problem(line: 1, column: 1, description: problem))
        }
        return .failure(firstBadByte(in: bytes))
    }

    /// `decode` as a located error: `file:line:column: message`.
    /// - Parameters:
    ///   - file: the file as the user should see it.
    ///   - status: the exit status of a bad file of this kind (65 for a spec, 78 for configuration).
    static func decode(_ data: Data, file: String, status: ExitStatus) throws(OffpeakError) -> String {
        switch decode(data) {
        case .success(let text): return text
        case .failure(let problem):
            throw OffpeakError(
                status, problem.description, location: "\(file):\(problem.line):\(problem.column)")
        }
    }

    /// The offset of the first byte that does not start or continue a valid UTF-8 sequence, for a
    /// reader of lines that names the column itself (`offpeak submit`).
    static func firstInvalidByte(in bytes: [UInt8]) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .error: return offset
            case .emptyInput: return nil
            }
        }
    }

    /// The 1-based line and column (in characters) of byte `offset` of UTF-8 `bytes`, for parsers
    /// that report a byte offset.
    static func position(ofByte offset: Int, in bytes: some Collection<UInt8>) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    /// "a little-endian byte-order mark" and the like, when `data` is UTF-16 by its first bytes: a
    /// byte-order mark, or a NUL in the same half of most of the first 32 code units (ASCII text
    /// in UTF-16).
    private static func utf16Kind(of data: Data) -> String? {
        let head = Array(data.prefix(64))
        if head.starts(with: [0xFF, 0xFE]) { return "it starts with a little-endian byte-order mark" }
        if head.starts(with: [0xFE, 0xFF]) { return "it starts with a big-endian byte-order mark" }
        let units = stride(from: 0, to: head.count - 1, by: 2).map { (head[$0], head[$0 + 1]) }
        guard units.count >= 2 else { return nil }
        let little = units.filter { $0.0 != 0 && $0.1 == 0 }.count
        let big = units.filter { $0.0 == 0 && $0.1 != 0 }.count
        if little * 2 > units.count && big == 0 { return "every other byte is NUL, little-endian" }
        if big * 2 > units.count && little == 0 { return "every other byte is NUL, big-endian" }
        return nil
    }

    /// Where the first NUL or invalid UTF-8 sequence starts.
    private static func firstBadByte(in bytes: Data.SubSequence) -> Problem {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var line = 1
        var column = 1
        var offset = bytes.startIndex
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if scalar == "\0" {
                    return Problem(line: line, column: column, description: "a NUL byte (0x00) is not text")
                }
                offset += encoded.count
                if scalar == "\n" {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
            case .error:
                let byte = String(bytes[offset], radix: 16, uppercase: true)
                let problem =
                    "not valid UTF-8: byte 0x\(byte) does not belong to a UTF-8 character; "
                    + "save the file as UTF-8"
                return Problem(line: line, column: column, description: problem)
            case .emptyInput:
                // Unreachable for bytes that failed validation; a position past the end says so.
                return Problem(line: line, column: column, description: "not valid UTF-8")
            }
        }
    }
}
