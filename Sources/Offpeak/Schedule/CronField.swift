/// One field of a cron expression: the values it allows, as bits of a 64-bit mask.
struct CronField: Sendable, Equatable {
    /// What a field is and which values and names it accepts.
    enum Kind: Sendable {
        case minute, hour, dayOfMonth, month, dayOfWeek

        var name: String {
            switch self {
            case .minute: "minute"
            case .hour: "hour"
            case .dayOfMonth: "day-of-month"
            case .month: "month"
            case .dayOfWeek: "day-of-week"
            }
        }

        /// The values a user may write; day-of-week also takes 7 for Sunday.
        var bounds: ClosedRange<Int> {
            switch self {
            case .minute: 0...59
            case .hour: 0...23
            case .dayOfMonth: 1...31
            case .month: 1...12
            case .dayOfWeek: 0...7
            }
        }

        /// Where `*` and `a/n` end: Sunday is 0, so day-of-week's open ranges stop at Saturday (6),
        /// as in croniter.
        var openEnd: Int { self == .dayOfWeek ? 6 : bounds.upperBound }

        var names: [String] {
            switch self {
            case .month: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
            case .dayOfWeek: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
            default: []
            }
        }

        /// The value of `names[0]`.
        var firstNamed: Int { self == .month ? 1 : 0 }

        var expected: String {
            let range = "\(bounds.lowerBound)-\(bounds.upperBound)"
            guard let first = names.first, let last = names.last else { return range }
            return "\(range) or \(first)-\(last)"
        }
    }

    let kind: Kind
    /// Bit `v` is set when value `v` matches (day-of-week 7 is folded into 0).
    let mask: UInt64
    /// The field was written starting with `*` (`*` or `*/n`): POSIX cron's test for an unrestricted
    /// day field, which decides whether day-of-month and day-of-week combine with AND or OR.
    let startsWithStar: Bool

    /// Parses `text`: a comma-separated list of `*`, `v`, `a-b`, each optionally `/step`, and `v/step`.
    init(_ text: String, kind: Kind) throws(CronError) {
        self.kind = kind
        startsWithStar = text.hasPrefix("*")
        var mask: UInt64 = 0
        for element in text.split(separator: ",", omittingEmptySubsequences: false) {
            mask |= try Self.parse(String(element), kind: kind)
        }
        if kind == .dayOfWeek, mask & (1 << 7) != 0 { mask = (mask | 1) & ~(1 << 7) }
        self.mask = mask
    }

    func contains(_ value: Int) -> Bool {
        value >= 0 && value < 64 && mask & (1 << UInt64(value)) != 0
    }

    /// The smallest allowed value at or above `value`, if any.
    func first(atOrAfter value: Int) -> Int? {
        guard value >= 0, value < 64 else { return nil }
        let rest = mask >> UInt64(value)
        return rest == 0 ? nil : value + rest.trailingZeroBitCount
    }

    /// One list element as a mask.
    private static func parse(_ element: String, kind: Kind) throws(CronError) -> UInt64 {
        guard !element.isEmpty else {
            throw CronError(
                field: kind.name, "expected a value, range or step between commas, got an empty one")
        }
        let parts = element.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else {
            throw CronError(field: kind.name, "expected at most one '/step', got '\(element)'")
        }
        var step = 1
        if parts.count == 2 {
            guard isDigits(parts[1]), let number = Int(parts[1]), number >= 1 else {
                throw CronError(field: kind.name, "expected a step of 1 or more after '/', got '\(element)'")
            }
            step = number
        }
        let base = String(parts[0])
        let low: Int
        let high: Int
        if base == "*" {
            (low, high) = (kind.bounds.lowerBound, kind.openEnd)
        } else if let dash = base.firstIndex(of: "-") {
            low = try value(String(base[..<dash]), kind: kind, in: element)
            high = try value(String(base[base.index(after: dash)...]), kind: kind, in: element)
            guard low <= high else {
                var hint = ""
                if kind == .dayOfWeek, high == 0 { hint = " (Sunday is also 7: write \(low)-7)" }
                throw CronError(
                    field: kind.name, "expected a range low-high with low <= high, got '\(element)'\(hint)")
            }
        } else {
            let start = try value(base, kind: kind, in: element)
            // `7/2` steps from Sunday like `0/2` (croniter's reading).
            low = parts.count == 2 && kind == .dayOfWeek && start == 7 ? 0 : start
            high = parts.count == 2 ? kind.openEnd : low
        }
        var mask: UInt64 = 0
        for bit in stride(from: low, through: high, by: step) { mask |= 1 << UInt64(bit) }
        return mask
    }

    /// A number or a three-letter name, checked against the field's bounds.
    private static func value(_ text: String, kind: Kind, in element: String) throws(CronError) -> Int {
        if let index = kind.names.firstIndex(of: text.uppercased()) { return kind.firstNamed + index }
        guard isDigits(Substring(text)), let number = Int(text),
            kind.bounds.contains(number)
        else {
            let got = text == element ? "'\(text)'" : "'\(text)' in '\(element)'"
            throw CronError(field: kind.name, "expected \(kind.expected), got \(got)")
        }
        return number
    }

    /// Plain ASCII digits only: `Int` alone would also take `+5`.
    private static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.allSatisfy { ("0"..."9").contains($0) }
    }
}
