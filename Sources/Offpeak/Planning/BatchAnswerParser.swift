/// Reads a batched answer: one JSON object keyed by item id, as real models send it — sometimes
/// inside a code fence, sometimes with prose before or after, sometimes broken.
///
/// It finds the outermost `{...}` and reads its top-level members in order, keeping duplicates, so
/// the splitter can tell a key that appears twice from one that appears once. Only string values
/// count as answers; anything else is kept as malformed.
enum BatchAnswerParser {
    /// One top-level member: its key and, when the value is a JSON string, the string.
    struct Member: Equatable {
        var key: String
        var text: String?
    }

    /// The members of the first JSON object in `answer`, or nil when there is none that parses.
    static func members(in answer: String) -> [Member]? {
        let scalars = Array(answer.unicodeScalars)
        var start = 0
        while let open = scalars[start...].firstIndex(of: "{") {
            var reader = Reader(scalars: scalars, index: open)
            if let members = reader.object() { return members }
            start = open + 1
        }
        return nil
    }

    /// A small recursive-descent JSON reader over unicode scalars.
    private struct Reader {
        let scalars: [Unicode.Scalar]
        var index: Int

        mutating func object() -> [Member]? {
            guard consume("{") else { return nil }
            var members: [Member] = []
            skipSpace()
            if consume("}") { return members }
            while true {
                skipSpace()
                guard let key = string() else { return nil }
                skipSpace()
                guard consume(":") else { return nil }
                skipSpace()
                let isString = peek() == "\""
                let valueStart = index
                guard skipValue() else { return nil }
                if isString {
                    var again = Reader(scalars: scalars, index: valueStart)
                    members.append(Member(key: key, text: again.string()))
                } else {
                    members.append(Member(key: key, text: nil))
                }
                skipSpace()
                if consume(",") { continue }
                if consume("}") { return members }
                return nil
            }
        }

        private mutating func skipValue() -> Bool {
            switch peek() {
            case "\"": return string() != nil
            case "{": return object() != nil
            case "[":
                index += 1
                skipSpace()
                if consume("]") { return true }
                while true {
                    skipSpace()
                    guard skipValue() else { return false }
                    skipSpace()
                    if consume(",") { continue }
                    return consume("]")
                }
            default:
                let start = index
                while let scalar = peek(), !",}] \n\r\t".unicodeScalars.contains(scalar) { index += 1 }
                let word = String(String.UnicodeScalarView(scalars[start..<index]))
                return word == "true" || word == "false" || word == "null" || Double(word) != nil
            }
        }

        mutating func string() -> String? {
            guard consume("\"") else { return nil }
            var text = String.UnicodeScalarView()
            while index < scalars.count {
                let scalar = scalars[index]
                index += 1
                switch scalar {
                case "\"": return String(text)
                case "\\":
                    guard index < scalars.count else { return nil }
                    let escaped = scalars[index]
                    index += 1
                    switch escaped {
                    case "n": text.append("\n")
                    case "t": text.append("\t")
                    case "r": text.append("\r")
                    case "b": text.append("\u{08}")
                    case "f": text.append("\u{0C}")
                    case "u":
                        guard let scalar = unicodeEscape() else { return nil }
                        text.append(scalar)
                    default: text.append(escaped)
                    }
                default: text.append(scalar)
                }
            }
            return nil
        }

        /// `\uXXXX`, joining a UTF-16 surrogate pair when one follows.
        private mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let high = hex4() else { return nil }
            if (0xD800..<0xDC00).contains(high), consume("\\"), consume("u"), let low = hex4() {
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            }
            return Unicode.Scalar(high)
        }

        private mutating func hex4() -> UInt32? {
            guard index + 4 <= scalars.count else { return nil }
            let digits = String(String.UnicodeScalarView(scalars[index..<index + 4]))
            index += 4
            return UInt32(digits, radix: 16)
        }

        private func peek() -> Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        private mutating func consume(_ scalar: Unicode.Scalar) -> Bool {
            guard peek() == scalar else { return false }
            index += 1
            return true
        }

        private mutating func skipSpace() {
            while let scalar = peek(), scalar == " " || scalar == "\n" || scalar == "\r" || scalar == "\t" {
                index += 1
            }
        }
    }
}
