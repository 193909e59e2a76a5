/// Turns an HTML page into the readable text a model should see: scripts, styles and the `<head>`
/// dropped, block elements on their own lines, entities decoded, whitespace collapsed.
///
/// Not a parser: a research source only needs its words in order, and markup costs tokens that
/// buy nothing. Inline tags (`<a>`, `<b>`, `<span>`) vanish without a space, as a browser renders
/// `un<b>usual</b>` as one word; block tags break the line, and paragraph-like ones leave a blank
/// line between them. Malformed markup degrades to more text, never to lost text, except inside
/// an unclosed `<script>` or `<style>`, which (as in a browser) runs to the end of the page.
enum HTMLText {
    /// Elements whose content is never text a reader sees.
    static let dropped: Set<String> = ["script", "style", "head", "noscript", "template", "svg"]
    /// Elements that start a new paragraph (a blank line before and after).
    static let paragraphs: Set<String> = [
        "p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "table", "ul", "ol", "dl", "section",
        "article", "header", "footer", "hr", "figure", "main", "aside", "nav", "form", "address", "details",
    ]
    /// Elements that start a new line.
    static let lines: Set<String> = [
        "br", "div", "li", "tr", "dt", "dd", "figcaption", "summary", "caption", "title",
    ]
    /// Elements that separate words: table cells.
    static let cells: Set<String> = ["td", "th"]

    /// The readable text of `html`.
    static func text(fromHTML html: String) -> String {
        let scalars = Array(html.unicodeScalars)
        var output = String.UnicodeScalarView()
        var text = String.UnicodeScalarView()
        var index = 0
        // Line breaks asked for by block tags since the last text: 1 = new line, 2 = blank line.
        // Held until text follows, so `</li><li>` or nested blocks break once, not once per tag.
        var pendingBreaks = 0
        func flushText() {
            // A line break in the source is only whitespace; lines come from block elements.
            let flat = String(String.UnicodeScalarView(text.map { $0 == "\n" ? " " : $0 }))
            text.removeAll()
            let decoded = decodeEntities(flat)
            if pendingBreaks > 0, decoded.contains(where: { !$0.isWhitespace }) {
                if !output.isEmpty {
                    output.append(contentsOf: String(repeating: "\n", count: pendingBreaks).unicodeScalars)
                }
                pendingBreaks = 0
            }
            output.append(contentsOf: decoded.unicodeScalars)
        }
        while index < scalars.count {
            guard scalars[index] == "<", let tag = Tag.read(scalars, at: index) else {
                text.append(scalars[index])
                index += 1
                continue
            }
            flushText()
            index = tag.end
            guard let name = tag.name else { continue }
            if dropped.contains(name), !tag.closing, !tag.selfClosing {
                if let close = Tag.findClosing(name, in: scalars, from: index) {
                    index = close
                } else if name != "head" {
                    index = scalars.count
                }
            } else if paragraphs.contains(name) {
                pendingBreaks = 2
            } else if name == "br" {
                pendingBreaks = min(pendingBreaks + 1, 2)
            } else if lines.contains(name) {
                pendingBreaks = max(pendingBreaks, 1)
            } else if cells.contains(name) {
                output.append(" ")
            }
        }
        flushText()
        return collapse(String(output))
    }

    /// Named entities worth knowing: the five XML ones, `&nbsp;` (as a plain space, so it
    /// collapses like one) and the punctuation pages use most.
    static let entities: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "ndash": "\u{2013}",
        "mdash": "\u{2014}", "hellip": "\u{2026}", "lsquo": "\u{2018}", "rsquo": "\u{2019}",
        "ldquo": "\u{201C}",
        "rdquo": "\u{201D}", "laquo": "\u{AB}", "raquo": "\u{BB}", "copy": "\u{A9}", "reg": "\u{AE}",
        "trade": "\u{2122}", "euro": "\u{20AC}", "middot": "\u{B7}", "bull": "\u{2022}", "shy": "",
    ]

    /// Decodes `&name;`, `&#NNN;` and `&#xHH;`; anything unknown or malformed stays as written.
    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            rest = rest[amp...]
            let body = rest.dropFirst().prefix(33)
            guard let semicolon = body.firstIndex(of: ";"), let value = entity(String(body[..<semicolon]))
            else {
                result += "&"
                rest = rest.dropFirst()
                continue
            }
            result += value
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }

    /// The text of one entity's name (`amp`, `#39`, `#x27`), or `nil`.
    private static func entity(_ name: String) -> String? {
        guard name.hasPrefix("#") else { return entities[name] }
        let digits = name.dropFirst()
        let number =
            digits.first == "x" || digits.first == "X"
            ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
        // NUL and the surrogates are not characters; `&#160;` (no-break space) collapses like a space.
        guard let number, number != 0, let scalar = Unicode.Scalar(number) else { return nil }
        return number == 0xA0 ? " " : String(Character(scalar))
    }

    /// Runs of spaces and tabs become one space, lines are trimmed, and more than one blank line
    /// in a row becomes one.
    static func collapse(_ text: String) -> String {
        var lines: [String] = []
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let words = raw.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\u{0C}" })
            let line = words.joined(separator: " ")
            if line.isEmpty, lines.last?.isEmpty ?? true { continue }
            lines.append(line)
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.joined(separator: "\n")
    }

    /// One tag, comment or declaration starting at a `<`.
    struct Tag {
        /// Lower-cased element name; `nil` for comments, doctypes and processing instructions.
        var name: String?
        var closing = false
        var selfClosing = false
        /// Index just past the `>`.
        var end: Int

        /// The tag at `start`, or `nil` when the `<` does not start one (`a < b`) and is text.
        static func read(_ scalars: [Unicode.Scalar], at start: Int) -> Tag? {
            var index = start + 1
            if match("!--", scalars, at: index) {
                let close = find("-->", in: scalars, from: index + 3)
                return Tag(name: nil, end: close.map { $0 + 3 } ?? scalars.count)
            }
            if index < scalars.count, scalars[index] == "!" || scalars[index] == "?" {
                return Tag(name: nil, end: endOfTag(scalars, from: index))
            }
            let closing = index < scalars.count && scalars[index] == "/"
            if closing { index += 1 }
            var name = ""
            while index < scalars.count, isLetter(scalars[index]) || ("0"..."9").contains(scalars[index]) {
                name.unicodeScalars.append(scalars[index])
                index += 1
            }
            guard let first = name.unicodeScalars.first, isLetter(first) else { return nil }
            let end = endOfTag(scalars, from: index)
            let selfClosing = end >= 2 && end <= scalars.count && scalars[end - 2] == "/"
            return Tag(name: name.lowercased(), closing: closing, selfClosing: selfClosing, end: end)
        }

        /// Index just past `</name ...>` at or after `start`, if the page has one.
        static func findClosing(_ name: String, in scalars: [Unicode.Scalar], from start: Int) -> Int? {
            var index = start
            let pattern = Array(("</" + name).unicodeScalars)
            while let found = find(pattern, in: scalars, from: index) {
                let after = found + pattern.count
                if after >= scalars.count || !isLetter(scalars[after]) {
                    return endOfTag(scalars, from: after)
                }
                index = after
            }
            return nil
        }

        /// Index just past the `>` that ends a tag, skipping quoted attribute values.
        private static func endOfTag(_ scalars: [Unicode.Scalar], from start: Int) -> Int {
            var quote: Unicode.Scalar?
            var index = start
            while index < scalars.count {
                let scalar = scalars[index]
                if let open = quote {
                    if scalar == open { quote = nil }
                } else if scalar == "\"" || scalar == "'" {
                    quote = scalar
                } else if scalar == ">" {
                    return index + 1
                }
                index += 1
            }
            return scalars.count
        }

        private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
        }

        private static func match(_ text: String, _ scalars: [Unicode.Scalar], at index: Int) -> Bool {
            let pattern = Array(text.unicodeScalars)
            return index + pattern.count <= scalars.count
                && Array(scalars[index..<index + pattern.count]) == pattern
        }

        private static func find(_ text: String, in scalars: [Unicode.Scalar], from start: Int) -> Int? {
            find(Array(text.unicodeScalars), in: scalars, from: start)
        }

        /// First index at or after `start` where `pattern` occurs, ASCII case-insensitively.
        private static func find(_ pattern: [Unicode.Scalar], in scalars: [Unicode.Scalar], from start: Int)
            -> Int?
        {
            guard !pattern.isEmpty, start + pattern.count <= scalars.count else { return nil }
            func lower(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
                ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32) ?? scalar : scalar
            }
            for index in start...(scalars.count - pattern.count)
            where pattern.indices.allSatisfy({ lower(scalars[index + $0]) == lower(pattern[$0]) }) {
                return index
            }
            return nil
        }
    }
}
