import Foundation

/// Metric families written in Prometheus' text format (version 0.0.4): what `MetricsText` fills.
/// Escapes what the format says must be escaped, so a value can never end a line or a label early.
struct MetricsFamilies {
    enum Kind: String {
        case counter, gauge
    }

    private(set) var text = ""
    private var names: Set<String> = []

    /// One family: its `# HELP` and `# TYPE` lines, then one sample per label set, in order.
    /// A family added twice keeps its first samples: a duplicate series is invalid in a scrape.
    mutating func add(_ name: String, _ kind: Kind, _ help: String, _ samples: [([String: String], Double)]) {
        guard names.insert(name).inserted else { return }
        text += "# HELP \(name) \(Self.escapeHelp(help))\n"
        text += "# TYPE \(name) \(kind.rawValue)\n"
        var seen: Set<String> = []
        for (labels, value) in samples {
            let rendered = labels.keys.sorted().map { "\($0)=\"\(Self.escapeLabel(labels[$0] ?? ""))\"" }
            let series = rendered.isEmpty ? name : "\(name){\(rendered.joined(separator: ","))}"
            guard seen.insert(series).inserted else { continue }
            text += "\(series) \(Self.number(value))\n"
        }
    }

    /// A label value: backslash, double quote and line feed escaped.
    static func escapeLabel(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    /// A `# HELP` text: backslash and line feed escaped (quotes are fine there).
    static func escapeHelp(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// A whole number without a fraction (`12`, not `12.0`), else the shortest text that reads back
    /// as the same double (`0.0123`, `1e-05`), as Go's parser, which Prometheus uses, reads it.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
