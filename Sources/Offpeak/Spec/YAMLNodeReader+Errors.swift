import Foundation
import Yams

/// Turning libyaml's errors into one-line located messages, and "did you mean" suggestions.
extension YAMLNodeReader {
    /// A `YamlError` as `path:line:column: invalid YAML: problem (context)`.
    func syntaxError(_ error: YamlError, yaml: String) -> OffpeakError {
        switch error {
        case .scanner(let context, let problem, let mark, _),
            .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            var text = "invalid YAML: \(problem)"
            if let context {
                let at = "\(context.text) at \(context.mark.line):\(context.mark.column)"
                // libyaml phrases some problems as the second half of a sentence ("but found ...").
                text = problem.hasPrefix("but ") ? "invalid YAML: \(at), \(problem)" : "\(text) (\(at))"
            }
            return self.error("", text, at: Position(line: mark.line, column: mark.column))
        case .reader(let problem, let offset, _, _):
            return self.error(
                "", "invalid YAML: \(problem)", at: offset.map { Self.position(at: $0, in: yaml) })
        case .duplicatedKeysInMapping(let duplicates, let context):
            let key = duplicates.first ?? ""
            let first = Position(line: context.mark.line, column: context.mark.column)
            let position = Self.repeated(key, after: first, in: yaml) ?? first
            return self.error(key, "duplicate key; each field may be given only once", at: position)
        default:
            return OffpeakError(status, "invalid YAML: \(error)", location: path)
        }
    }

    /// The allowed name closest to `name` by edit distance, if it is within 2 edits.
    static func closest(to name: String, in allowed: [String]) -> String? {
        let scored = allowed.map { ($0, editDistance(name, $0)) }.filter { $0.1 <= 2 }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance over characters.
    static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs)
        let b = Array(rhs)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            previous = current
        }
        return previous[b.count]
    }

    /// Line and column of a character offset.
    private static func position(at offset: Int, in yaml: String) -> Position {
        var line = 1
        var column = 1
        for character in yaml.prefix(offset) {
            if character == "\n" || character == "\r\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return Position(line: line, column: column)
    }

    /// Where a block-style key written first at `first` is written again, so the message points at
    /// the repeat (the line a user most likely just added). libyaml reports only the first one;
    /// this looks for `key:` at the same column further down the same block, and gives up
    /// (returning `nil`) for flow mappings or quoted keys.
    private static func repeated(_ key: String, after first: Position, in yaml: String) -> Position? {
        let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false)
        let indent = first.column - 1
        guard first.line < lines.count, !key.isEmpty else { return nil }
        for index in first.line..<lines.count {
            let scalars = Array(lines[index].unicodeScalars)
            let lead = scalars.prefix(indent)
            let blank = scalars.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\r" }
            if blank || scalars.first == "#" { continue }
            guard scalars.count > indent, lead.allSatisfy({ $0 == " " || $0 == "-" }) else { return nil }
            let rest = String(String.UnicodeScalarView(scalars[indent...]))
            guard rest.hasPrefix(key) else { continue }
            let after = rest.dropFirst(key.count).drop { $0 == " " || $0 == "\t" }
            if after.first == ":" { return Position(line: index + 1, column: first.column) }
        }
        return nil
    }
}
