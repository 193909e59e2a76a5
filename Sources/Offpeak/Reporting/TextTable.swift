import Foundation

/// Left-aligned columns separated by two spaces; the last column is never padded.
public final class TextTable {
    private let columns: [String]
    private var rows: [[String]] = []

    public init(columns: [String]) {
        self.columns = columns
    }

    public func add(_ row: [String]) {
        rows.append(row)
    }

    public func render() -> String {
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
