import Foundation

/// Left-aligned columns separated by two spaces; the last column is never padded.
final class TextTable {
    private let columns: [String]
    private var rows: [[String]] = []

    init(columns: [String]) {
        self.columns = columns
    }

    /// Adds a row; each cell is put on one line (`oneLine`).
    func add(_ row: [String]) {
        rows.append(row.map(TextTable.oneLine))
    }

    /// `text` on one line: a provider's multi-line error, a tab or a control character (an escape
    /// sequence from a server) would break the table, or the terminal, so each run of them and of
    /// spaces becomes one space. `--json` keeps the text as it was.
    static func oneLine(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var gap = false
        for scalar in text.unicodeScalars {
            let breaks =
                scalar == " " || scalar.properties.generalCategory == .control
                || scalar.properties.generalCategory == .lineSeparator
                || scalar.properties.generalCategory == .paragraphSeparator
            if breaks {
                gap = true
                continue
            }
            if gap && !out.isEmpty { out.append(" ") }
            gap = false
            out.append(scalar)
        }
        return String(out)
    }

    /// `text` cut to `limit` characters, with an ellipsis when it was longer.
    static func shortened(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(max(0, limit - 1))) + "…"
    }

    func render() -> String {
        let all = [columns] + rows
        let widths = columns.indices.map { column in
            all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1
                    ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n") + "\n"
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
