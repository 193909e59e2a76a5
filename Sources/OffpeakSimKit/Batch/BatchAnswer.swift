/// The answer to a batched prompt: one JSON object keyed by item id, as `BatchPrompt` asks for.
///
/// Kept as a list of entries rather than a dictionary because a damaged answer may repeat a key,
/// hold a value that is not a string, or list the items in another order, and a benchmark must
/// see those flaws in the text exactly as a real model would write them.
public struct BatchAnswer: Sendable, Equatable {
    /// A value as written into the object; only `.string` is what the prompt asked for.
    public enum Value: Sendable, Equatable {
        case string(String)
        case null
        case number(Int)
    }

    public struct Entry: Sendable, Equatable {
        public var key: String
        public var value: Value
        /// The position of the item this entry answers, in the prompt's order.
        public var item: Int

        public init(key: String, value: Value, item: Int) {
            self.key = key
            self.value = value
            self.item = item
        }
    }

    /// Prose or a code fence around the object, as models add when told not to.
    public struct Wrapping: Sendable, Equatable {
        public var prefix: String
        public var suffix: String

        public init(prefix: String, suffix: String) {
            self.prefix = prefix
            self.suffix = suffix
        }
    }

    public var entries: [Entry]
    /// nil for the bare object the prompt asked for.
    public var wrapping: Wrapping?

    public init(entries: [Entry], wrapping: Wrapping? = nil) {
        self.entries = entries
        self.wrapping = wrapping
    }

    /// The undamaged answer: each item's own answer as a string, in the items' order.
    public init(items: [BatchItem], answers: [String]) {
        self.init(
            entries: zip(items, answers).enumerated().map { index, pair in
                Entry(key: pair.0.id, value: .string(pair.1), item: index)
            })
    }

    /// The compact object, `{"id":"answer",...}`, inside its wrapping if it has one.
    public var text: String {
        var json = "{"
        for (index, entry) in entries.enumerated() {
            if index > 0 { json += "," }
            json += Self.quoted(entry.key) + ":"
            switch entry.value {
            case .string(let text): json += Self.quoted(text)
            case .null: json += "null"
            case .number(let number): json += String(number)
            }
        }
        json += "}"
        guard let wrapping else { return json }
        return wrapping.prefix + json + wrapping.suffix
    }

    /// `text` as a JSON string literal: quotes, backslashes and control characters escaped,
    /// everything else (non-ASCII included) written as is, as `JSONEncoder` writes strings.
    public static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
