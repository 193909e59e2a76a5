import Foundation

/// The type names one Swift file declares and uses, as the layer check reads them: comments and the
/// text of string literals are blanked first (code interpolated into a string is kept, it is code),
/// then declarations are told apart by brace depth.
///
/// Precision over cleverness: only names declared outside any braces are top-level; a name right
/// after a `.` is a member or a nested type (`CallReply.Outcome`), not a use of a top-level type; and
/// a nested type a file declares (`Kind`, `State`, `CodingKeys`) shadows a top-level one in that file.
struct SwiftFileNames {
    /// Types, protocols, actors and type aliases declared outside any braces.
    var declared: Set<String> = []
    /// The types the file's top-level extensions extend (`extension JobCatalog.Entry`: `JobCatalog`).
    var extended: Set<String> = []
    /// Types declared inside another.
    var nested: Set<String> = []
    /// Capitalized names the file uses that may be top-level types: not after a `.`, not the
    /// file's own nested types. Includes what it extends.
    var used: Set<String> = []

    private static let declarationKeywords: Set<String> = [
        "struct", "enum", "class", "protocol", "actor", "typealias", "extension",
    ]

    init(source: String) {
        let code = CodeText.blankingCommentsAndStrings(source)
        var depth = 0
        var pendingKeyword: String?
        var mentioned: Set<String> = []
        var index = code.startIndex
        while index < code.endIndex {
            let byte = code[index]
            if byte == UInt8(ascii: "{") {
                depth += 1
            } else if byte == UInt8(ascii: "}") {
                depth -= 1
            }
            guard Self.startsWord(byte) else {
                index += 1
                continue
            }
            let start = index
            while index < code.endIndex, Self.continuesWord(code[index]) { index += 1 }
            let word = String(decoding: code[start..<index], as: UTF8.self)
            if let keyword = pendingKeyword {
                pendingKeyword = nil
                if keyword == "extension" {
                    if depth == 0 { extended.insert(word) }
                } else if depth == 0 {
                    declared.insert(word)
                    continue
                } else {
                    nested.insert(word)
                    continue
                }
            }
            if Self.declarationKeywords.contains(word) {
                pendingKeyword = word
            } else if let first = word.unicodeScalars.first, CharacterSet.uppercaseLetters.contains(first),
                !Self.followsMemberDot(code, at: start)
            {
                mentioned.insert(word)
            }
        }
        used = mentioned.subtracting(nested).union(extended)
    }

    private static func startsWord(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "_")
    }

    private static func continuesWord(_ byte: UInt8) -> Bool {
        startsWord(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// After `a.` or a line break then `.`: a member. `0...Limit` is a range, not a member.
    private static func followsMemberDot(_ code: [UInt8], at index: Int) -> Bool {
        var before = index - 1
        while before >= 0, code[before] == UInt8(ascii: " ") || code[before] == UInt8(ascii: "\n") {
            before -= 1
        }
        guard before >= 0, code[before] == UInt8(ascii: ".") else { return false }
        return before == 0 || code[before - 1] != UInt8(ascii: ".")
    }
}

/// Swift source with comments and string-literal text replaced by spaces, as UTF-8.
enum CodeText {
    static func blankingCommentsAndStrings(_ source: String) -> [UInt8] {
        var blanker = Blanker(bytes: Array(source.utf8))
        blanker.code(inInterpolation: false)
        return blanker.out
    }

    private struct Blanker {
        let bytes: [UInt8]
        var index = 0
        var out: [UInt8] = []

        init(bytes: [UInt8]) {
            self.bytes = bytes
            out.reserveCapacity(bytes.count)
        }

        private func starts(_ text: [UInt8]) -> Bool {
            index + text.count <= bytes.count && bytes[index..<index + text.count].elementsEqual(text)
        }

        /// Copies code until the end, or (inside `\(...)`) until the parenthesis that closes it.
        mutating func code(inInterpolation: Bool) {
            var parentheses = 0
            while index < bytes.count {
                if starts(Array("//".utf8)) {
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                    continue
                }
                if starts(Array("/*".utf8)) {
                    blockComment()
                    continue
                }
                if let opening = stringOpening() {
                    index += opening.length
                    out.append(UInt8(ascii: " "))
                    string(hashes: opening.hashes, multiline: opening.multiline)
                    continue
                }
                let byte = bytes[index]
                if inInterpolation, byte == UInt8(ascii: "(") {
                    parentheses += 1
                } else if inInterpolation, byte == UInt8(ascii: ")") {
                    if parentheses == 0 {
                        index += 1
                        return
                    }
                    parentheses -= 1
                }
                out.append(byte)
                index += 1
            }
        }

        /// `/* ... */`, nested as Swift allows; line breaks are kept.
        private mutating func blockComment() {
            var depth = 0
            while index < bytes.count {
                if starts(Array("/*".utf8)) {
                    depth += 1
                    index += 2
                } else if starts(Array("*/".utf8)) {
                    depth -= 1
                    index += 2
                    if depth == 0 { return }
                } else {
                    if bytes[index] == UInt8(ascii: "\n") { out.append(UInt8(ascii: "\n")) }
                    index += 1
                }
            }
        }

        /// `"`, `"""`, `#"`, `##"""`…: how many `#`, whether multi-line, and the opening's length.
        private func stringOpening() -> (hashes: Int, multiline: Bool, length: Int)? {
            var hashes = 0
            while index + hashes < bytes.count, bytes[index + hashes] == UInt8(ascii: "#") { hashes += 1 }
            let quote = index + hashes
            guard quote < bytes.count, bytes[quote] == UInt8(ascii: "\"") else { return nil }
            let multiline =
                quote + 2 < bytes.count && bytes[quote + 1] == UInt8(ascii: "\"")
                && bytes[quote + 2] == UInt8(ascii: "\"")
            return (hashes, multiline, hashes + (multiline ? 3 : 1))
        }

        /// Skips a literal's text up to its closing quote, copying the code of its interpolations.
        private mutating func string(hashes: Int, multiline: Bool) {
            let hashText = [UInt8](repeating: UInt8(ascii: "#"), count: hashes)
            let close = Array((multiline ? "\"\"\"" : "\"").utf8) + hashText
            let escape = [UInt8(ascii: "\\")] + hashText
            while index < bytes.count {
                if starts(escape + [UInt8(ascii: "(")]) {
                    index += escape.count + 1
                    out.append(UInt8(ascii: " "))
                    code(inInterpolation: true)
                } else if starts(escape) {
                    index += escape.count + 1
                } else if starts(close) {
                    index += close.count
                    return
                } else {
                    if bytes[index] == UInt8(ascii: "\n") { out.append(UInt8(ascii: "\n")) }
                    index += 1
                }
            }
        }
    }
}
