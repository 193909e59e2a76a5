import Foundation

/// A reader for one flat JSON object (string, number, boolean and null values): a hit on an answer
/// stored in the JSON form (written before `AnswerPayload`, which needs no parse).
///
/// Foundation's `JSONDecoder` spends about 8 µs on a 2 KB cached answer, more than the SQLite lookup;
/// this takes well under one. It reads only what `CachePayload.encodeJSON` writes. Anything else (nesting, bad
/// syntax, a lone surrogate) gives nil, and the caller falls back to `JSONDecoder`, whose errors say
/// what is wrong.
enum FlatJSON {
    enum Value {
        case string(String)
        /// The number as written, converted by whoever knows its type.
        case number(UnsafeBufferPointer<UInt8>)
        case bool(Bool)
        case null
    }

    /// Calls `visit` with each member's key (as written, unescaped keys only) and value, in order.
    /// - Returns: false when `bytes` is not one flat object.
    static func forEachMember(
        in bytes: UnsafeBufferPointer<UInt8>,
        _ visit: (_ key: UnsafeBufferPointer<UInt8>, _ value: Value) -> Void
    ) -> Bool {
        var reader = Reader(bytes: bytes)
        return reader.object(visit)
    }

    /// Whether `key` is `name`, byte for byte.
    static func matches(_ key: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard key.count == name.utf8CodeUnitCount else { return false }
        guard let base = key.baseAddress else { return true }
        return memcmp(base, name.utf8Start, key.count) == 0
    }

    /// A whole number, or nil (a fraction, an exponent or an overflow).
    static func int(_ digits: UnsafeBufferPointer<UInt8>) -> Int? {
        var rest = digits[...]
        let negative = rest.first == UInt8(ascii: "-")
        if negative { rest = rest.dropFirst() }
        guard !rest.isEmpty else { return nil }
        var value = 0
        for byte in rest {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflow, !overflow2 else { return nil }
            value = sum
        }
        return negative ? -value : value
    }

    static func double(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        Double(String(decoding: text, as: UTF8.self))
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func object(_ visit: (UnsafeBufferPointer<UInt8>, Value) -> Void) -> Bool {
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return false }
            skipSpace()
            if take(UInt8(ascii: "}")) { return end() }
            while true {
                skipSpace()
                guard take(UInt8(ascii: "\"")) else { return false }
                let keyStart = index
                index = plainRunEnd(from: index)
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
                let key = UnsafeBufferPointer(rebasing: bytes[keyStart..<index])
                index += 1
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return false }
                skipSpace()
                guard let value = value() else { return false }
                visit(key, value)
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return false }
                return end()
            }
        }

        private mutating func end() -> Bool {
            skipSpace()
            return index == bytes.count
        }

        private mutating func value() -> Value? {
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                return string().map(Value.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return nil
            }
        }

        private mutating func literal(_ word: StaticString, _ value: Value) -> Value? {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return nil }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return nil }
            index += count
            return value
        }

        private mutating func number() -> Value? {
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"),
                    UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                    index += 1
                default:
                    return .number(UnsafeBufferPointer(rebasing: bytes[start..<index]))
                }
            }
            return .number(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        }

        /// The rest of a string whose opening quote was read; its closing quote is consumed.
        private mutating func string() -> String? {
            let start = index
            index = plainRunEnd(from: index)
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "\"") {
                defer { index += 1 }
                return text(start..<index)
            }
            // Escapes: copy the plain runs between them in bulk.
            var scratch: [UInt8] = []
            scratch.reserveCapacity(bytes.count - start)
            scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return String(decoding: scratch, as: UTF8.self)
                }
                guard byte == UInt8(ascii: "\\"), index + 1 < bytes.count else { return nil }
                let escape = bytes[index + 1]
                index += 2
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escape)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    scratch.append(contentsOf: String(Character(scalar)).utf8)
                default: return nil
                }
                let run = index
                index = plainRunEnd(from: index)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
            }
            return nil
        }

        /// Where the run of plain string bytes from `start` ends: at the first quote or backslash
        /// (found with `memchr`, which reads many bytes a cycle), or at the end. Raw control
        /// characters, which `JSONEncoder` never writes, are let through.
        private func plainRunEnd(from start: Int) -> Int {
            guard let base = bytes.baseAddress, start < bytes.count else { return bytes.count }
            let rest = bytes.count - start
            let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), rest)
            let searched = quote.map { UnsafeRawPointer($0) - UnsafeRawPointer(base + start) } ?? rest
            let backslash = memchr(base + start, Int32(UInt8(ascii: "\\")), searched)
            let found = backslash.map { UnsafeRawPointer($0) - UnsafeRawPointer(base + start) } ?? searched
            return start + found
        }

        /// `XXXX` after `\u`, and its low surrogate's `\uXXXX` when it is a high one.
        private mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let unit = hex4() else { return nil }
            if unit < 0xD800 || unit > 0xDFFF { return Unicode.Scalar(unit) }
            guard unit < 0xDC00, index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
            else { return nil }
            index += 2
            guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        }

        private mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                index += 1
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }

        private mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
                default: return
                }
            }
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private func text(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
    }
}

extension CachedAnswer {
    /// The answer in a flat JSON object, or nil when it is not one, or a member is missing or of
    /// another type.
    init?(flatJSON bytes: UnsafeBufferPointer<UInt8>) {
        var text: String?
        var model: String?
        var finishReason: String?
        var inputTokens: Int?
        var outputTokens: Int?
        var dollars: Double?
        var naiveDollars: Double?
        var citations: String?
        let parsed = FlatJSON.forEachMember(in: bytes) { key, value in
            switch value {
            case .string(let string):
                if FlatJSON.matches(key, "text") {
                    text = string
                } else if FlatJSON.matches(key, "model") {
                    model = string
                } else if FlatJSON.matches(key, "finishReason") {
                    finishReason = string
                } else if FlatJSON.matches(key, "citations") {
                    citations = string
                }
            case .number(let number):
                if FlatJSON.matches(key, "inputTokens") {
                    inputTokens = FlatJSON.int(number)
                } else if FlatJSON.matches(key, "outputTokens") {
                    outputTokens = FlatJSON.int(number)
                } else if FlatJSON.matches(key, "dollars") {
                    dollars = FlatJSON.double(number)
                } else if FlatJSON.matches(key, "naiveDollars") {
                    naiveDollars = FlatJSON.double(number)
                }
            case .bool, .null:
                break
            }
        }
        guard parsed, let text, let model, let finishReason, let inputTokens, let outputTokens, let dollars,
            let naiveDollars
        else { return nil }
        self.init(
            text: text, model: model, finishReason: finishReason, inputTokens: inputTokens,
            outputTokens: outputTokens, dollars: dollars, naiveDollars: naiveDollars, citations: citations)
    }
}
