import Foundation
import Yams

/// Reads a composed YAML tree for one file and turns every problem into an `OffpeakError` that names
/// the file, line and column, and the field path (`budget.max_calls`, `items[3].topic`).
///
/// Both job specs and `offpeak.yaml` go through this type, so a user sees the same kind of message
/// whichever file is wrong; only the exit status differs (`status`).
struct YAMLNodeReader {
    /// The file as the user should see it in messages, e.g. `jobs/digest.yaml`.
    let path: String
    /// `.dataError` for job specs, `.configuration` for `offpeak.yaml`.
    let status: ExitStatus

    /// Parses `yaml` into a node tree; syntax errors, duplicate keys and alias bombs
    /// (`YAMLAliasCheck`, before Yams spends minutes on one) become located errors.
    func compose(_ yaml: String) throws(OffpeakError) -> Node? {
        do {
            try YAMLAliasCheck.check(yaml)
        } catch {
            throw self.error(error.field, error.problem, at: Position(line: error.line, column: error.column))
        }
        do {
            // The encoding is given: Yams's default reads the whole environment on every call
            // (`YAMS_DEFAULT_ENCODING`), a tenth of `jobs ls` over 50 specs; a Swift string is UTF-8.
            // The resolver is `basic` (every plain scalar a string): this reader takes each scalar's
            // text and types it itself, and the default resolver's regular expressions, run on
            // every key as Yams checks a mapping for duplicates, were a quarter of an idle tick.
            // Keys are compared as text, so `1:` and `"1":` in one mapping are duplicates, as they
            // are to this reader.
            return try Yams.compose(yaml: yaml, .basic, .default, .utf8)
        } catch let error as YamlError {
            throw syntaxError(error, yaml: yaml)
        } catch {
            throw OffpeakError(status, "YAML: \(error)", location: path)
        }
    }

    /// A located error: `path:line:column: field: problem`.
    func error(_ field: String, _ problem: String, at node: Node?) -> OffpeakError {
        error(field, problem, at: node?.mark.map { Position(line: $0.line, column: $0.column) })
    }

    func error(_ field: String, _ problem: String, at position: Position?) -> OffpeakError {
        let position = position ?? Position(line: 1, column: 1)
        let text = field.isEmpty ? problem : "\(field): \(problem)"
        return OffpeakError(status, text, location: "\(path):\(position.line):\(position.column)")
    }

    /// `path:line:column` of a node, for errors with another status (I/O).
    func location(of node: Node) -> String {
        let mark = node.mark
        return "\(path):\(mark?.line ?? 1):\(mark?.column ?? 1)"
    }

    /// A 1-based line and column (Yams' `Mark` cannot be created outside Yams).
    struct Position: Equatable {
        var line: Int
        var column: Int
    }

    /// Checks that `node` is a mapping whose keys are all in `allowed`, suggesting the closest name.
    func mapping(_ node: Node, at field: String, allowed: [String]) throws(OffpeakError) -> YAMLMapping {
        guard case .mapping(let mapping) = node else {
            let list = allowed.joined(separator: ", ")
            throw error(field, "expected a mapping of fields (\(list)), got \(describe(node))", at: node)
        }
        var entries: [String: (key: Node, value: Node)] = [:]
        for (key, value) in mapping {
            guard case .scalar(let scalar) = key else {
                throw error(field, "expected a field name, got \(describe(key))", at: key)
            }
            let name = scalar.string
            guard allowed.contains(name) else {
                let fieldPath = YAMLMapping.join(field, name)
                var problem = "unknown field"
                if let close = Self.closest(to: name, in: allowed) { problem += "; did you mean '\(close)'?" }
                problem += " (allowed: \(allowed.joined(separator: ", ")))"
                throw error(fieldPath, problem, at: key)
            }
            entries[name] = (key, value)
        }
        return YAMLMapping(reader: self, node: node, field: field, entries: entries)
    }

    /// The elements of a YAML list.
    func list(_ node: Node, at field: String) throws(OffpeakError) -> [Node] {
        guard case .sequence(let sequence) = node else {
            throw error(field, "expected a list, got \(describe(node))", at: node)
        }
        return Array(sequence)
    }

    /// A scalar's text; numbers and booleans are taken as written.
    func string(_ node: Node, at field: String) throws(OffpeakError) -> String {
        guard case .scalar(let scalar) = node else {
            throw error(field, "expected a string, got \(describe(node))", at: node)
        }
        return scalar.string
    }

    func wholeNumber(_ node: Node, at field: String, in range: ClosedRange<Int>) throws(OffpeakError) -> Int {
        let expected = Self.expectation(for: range)
        let text = try scalarText(node, at: field, expected: expected)
        guard let value = Int(text.replacingOccurrences(of: "_", with: "")), range.contains(value) else {
            throw error(field, "expected \(expected), got '\(text)'", at: node)
        }
        return value
    }

    /// A finite number inside `range`; `exclusiveLower` makes `range.lowerBound` itself invalid.
    func number(
        _ node: Node, at field: String, in range: ClosedRange<Double>, exclusiveLower: Bool = false
    ) throws(OffpeakError) -> Double {
        let low = Self.format(range.lowerBound)
        let high = Self.format(range.upperBound)
        let expected =
            exclusiveLower
            ? "a number more than \(low) and at most \(high)" : "a number from \(low) to \(high)"
        let text = try scalarText(node, at: field, expected: expected)
        guard let value = Double(text), value.isFinite, range.contains(value),
            !(exclusiveLower && value == range.lowerBound)
        else { throw error(field, "expected \(expected), got '\(text)'", at: node) }
        return value
    }

    /// A share of a whole: a number more than 0 and at most 1 (less than 1 with `belowOne`), or the
    /// same as a percentage (`95%`, `95 %`).
    func share(_ node: Node, at field: String, belowOne: Bool = false) throws(OffpeakError) -> Double {
        let expected =
            belowOne
            ? "a share more than 0 and less than 1, like 0.95 or 95%"
            : "a share more than 0 and at most 1, like 0.03 or 3%"
        let text = try scalarText(node, at: field, expected: expected)
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var value: Double?
        if trimmed.hasSuffix("%") {
            value = Double(trimmed.dropLast().trimmingCharacters(in: .whitespaces)).map { $0 / 100 }
        } else {
            value = Double(trimmed)
        }
        guard let value, value.isFinite, value > 0, belowOne ? value < 1 : value <= 1 else {
            throw error(field, "expected \(expected), got '\(text)'", at: node)
        }
        return value
    }

    /// `true`/`false` (and YAML 1.1's yes/no/on/off), quoted or not.
    func bool(_ node: Node, at field: String) throws(OffpeakError) -> Bool {
        let text = try scalarText(node, at: field, expected: "true or false")
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(field, "expected true or false, got '\(text)'", at: node)
        }
    }

    /// One of an enum's raw values; the message lists them all.
    func choice<Value: RawRepresentable & CaseIterable>(
        _ node: Node, at field: String, as type: Value.Type
    ) throws(OffpeakError) -> Value where Value.RawValue == String {
        let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
        let text = try scalarText(node, at: field, expected: "one of \(allowed)")
        guard let value = Value(rawValue: text) else {
            throw error(field, "expected one of \(allowed), got '\(text)'", at: node)
        }
        return value
    }

    /// A duration (`90s`, `1h30m`, or bare seconds) up to `most`; `allowZero` decides whether `0`
    /// is valid. Every duration field gives its bound (`ValueLimits`), so no date derived from one
    /// can leave what the store holds.
    func duration(
        _ node: Node, at field: String, allowZero: Bool, atMost most: TimeInterval
    ) throws(OffpeakError) -> TimeInterval {
        let range = "from \(allowZero ? "0s" : "1s") to \(DurationParser.text(most))"
        let expected = "a duration \(range), like 90s, 10m, 24h, 7d or 1h30m"
        let text = try scalarText(node, at: field, expected: expected)
        guard let seconds = DurationParser.seconds(text), allowZero || seconds > 0, seconds <= most else {
            throw error(field, "expected \(expected), got '\(text)'", at: node)
        }
        return seconds
    }

    /// A size in bytes (`268435456`, `256MB`, `1 GiB`) from 1 byte up to `most`.
    func byteSize(_ node: Node, at field: String, atMost most: Int) throws(OffpeakError) -> Int {
        let expected = "a size from 1 byte to \(ByteSizeParser.text(most)), like 268435456, 256MB or 1GiB"
        let text = try scalarText(node, at: field, expected: expected)
        guard let bytes = ByteSizeParser.bytes(text), bytes > 0, bytes <= most else {
            throw error(field, "expected \(expected), got '\(text)'", at: node)
        }
        return bytes
    }

    /// A list of strings; a single string is taken as a list of one.
    func strings(_ node: Node, at field: String) throws(OffpeakError) -> [(String, Node)] {
        if case .scalar = node { return [(try string(node, at: field), node)] }
        var result: [(String, Node)] = []
        for (index, element) in try list(node, at: field).enumerated() {
            result.append((try string(element, at: "\(field)[\(index + 1)]"), element))
        }
        return result
    }

    /// "a mapping", "a list" or the scalar quoted, for "got ..." in messages.
    func describe(_ node: Node) -> String {
        switch node {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .scalar(let scalar): return "'\(scalar.string)'"
        case .alias: return "an alias"
        }
    }

    private func scalarText(_ node: Node, at field: String, expected: String) throws(OffpeakError) -> String {
        guard case .scalar(let scalar) = node else {
            throw error(field, "expected \(expected), got \(describe(node))", at: node)
        }
        return scalar.string
    }

    private static func expectation(for range: ClosedRange<Int>) -> String {
        switch (range.lowerBound, range.upperBound) {
        case (1, Int.max): return "a positive whole number"
        case (0, Int.max): return "a whole number, zero or more"
        case (let low, let high): return "a whole number from \(grouped(low)) to \(grouped(high))"
        }
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? grouped(Int(value)) : String(value)
    }

    /// `1_000_000` for large numbers (a form YAML numbers may be written in), else plain digits.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        guard digits.count > 4 else { return String(value) }
        var groups: [Substring] = []
        var end = digits.endIndex
        while end > digits.startIndex {
            let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
            groups.insert(digits[start..<end], at: 0)
            end = start
        }
        return (value < 0 ? "-" : "") + groups.joined(separator: "_")
    }
}
