import Foundation

/// Where a value sits in a JSON text, for messages that name a line and column: Foundation's
/// decoders say which field was wrong (a coding path) but not where it is.
///
/// Reads text that already parsed; anything it cannot follow gives nil, never a wrong place.
enum JSONPosition {
    /// One step of a path: a member's key or an element's index.
    enum Step: Equatable, Sendable {
        case key(String)
        case index(Int)
    }

    /// The line and column (1-based, columns in characters) of the value `path` leads to, or of
    /// the deepest value on the path that exists; nil when the text does not start as JSON.
    static func of(_ path: [Step], in data: Data) -> (line: Int, column: Int)? {
        let bytes = [UInt8](data)
        var scanner = Scanner(bytes: bytes)
        guard let offset = scanner.find(path[...]) else { return nil }
        return UTF8Text.position(ofByte: offset, in: bytes)
    }

    /// `path` as a reader writes it: `price_windows.windows[1].hours`.
    static func text(_ path: [Step]) -> String {
        var out = ""
        for step in path {
            switch step {
            case .key(let key): out += out.isEmpty ? key : ".\(key)"
            case .index(let index): out += "[\(index)]"
            }
        }
        return out
    }

    /// A coding path as steps (an array element's key has an `intValue`).
    static func steps(_ codingPath: [any CodingKey]) -> [Step] {
        codingPath.map { key in key.intValue.map(Step.index) ?? .key(key.stringValue) }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var at = 0

        /// The offset of the value at `path` from here (a value starts here).
        mutating func find(_ path: ArraySlice<Step>) -> Int? {
            skipSpace()
            guard at < bytes.count else { return nil }
            let start = at
            guard let step = path.first else { return start }
            switch (bytes[at], step) {
            case (UInt8(ascii: "{"), .key(let wanted)):
                at += 1
                while true {
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { return start }
                    guard let key = string() else { return nil }
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { return nil }
                    at += 1
                    if key == wanted { return find(path.dropFirst()) }
                    guard skipValue(), separator() else { return start }
                }
            case (UInt8(ascii: "["), .index(let wanted)):
                at += 1
                var index = 0
                while true {
                    skipSpace()
                    guard at < bytes.count, bytes[at] != UInt8(ascii: "]") else { return start }
                    if index == wanted { return find(path.dropFirst()) }
                    guard skipValue(), separator() else { return start }
                    index += 1
                }
            default:
                return start
            }
        }

        /// Past a `,` (true) or at the end of a container (false).
        mutating func separator() -> Bool {
            skipSpace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: ",") else { return false }
            at += 1
            return true
        }

        mutating func skipSpace() {
            while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
        }

        /// A string's text, `at` past its closing quote.
        mutating func string() -> String? {
            let open = at
            at += 1
            var escaped = false
            while at < bytes.count {
                let byte = bytes[at]
                at += 1
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    return try? JSONDecoder().decode(String.self, from: Data(bytes[open..<at]))
                }
            }
            return nil
        }

        /// Past one value of any kind.
        mutating func skipValue() -> Bool {
            skipSpace()
            var depth = 0
            while at < bytes.count {
                switch bytes[at] {
                case UInt8(ascii: "\""):
                    guard string() != nil else { return false }
                    if depth == 0 { return true }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return true }
                    depth -= 1
                    if depth == 0 {
                        at += 1
                        return true
                    }
                case UInt8(ascii: ","), 0x20, 0x09, 0x0A, 0x0D:
                    if depth == 0 { return true }
                default: break
                }
                at += 1
            }
            return depth == 0
        }
    }
}
