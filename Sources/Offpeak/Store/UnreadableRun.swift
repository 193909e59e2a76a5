import Foundation
import GRDB

/// A row of `runs` that does not decode: a date no version of offpeak can read back (written before
/// `StoredDate` refused such values), a hand edit. Reads that list runs leave it out and name it
/// here, so one bad row never stops commands about other runs: `status` lists it, `tick` reports it
/// once and goes on, `run` of its job explains (exit 74) and says how to repair it when that is safe.
struct UnreadableRun: Sendable, Codable, Equatable {
    var id: String
    var job: String
    /// What in the row cannot be read.
    var why: String
    /// The statement that repairs the row without changing what it means, when one exists.
    var repair: String?

    /// Columns where NULL means what a date past year 9999 means: a deadline that never comes.
    static let neverWhenNull: Set<String> = ["deadline_at"]

    init(row: Row, error: any Error) {
        id = Self.text(row, "id")
        job = Self.text(row, "job")
        var dates: [String] = []
        for (column, value) in row where column.hasSuffix("_at") && !value.isNull {
            if Date.fromDatabaseValue(value) == nil { dates.append(column) }
        }
        if let column = dates.first {
            why =
                "\(column) is \"\(Self.text(row, column))\", not a date the store can read (years 1 to 9999)"
        } else {
            // GRDB's message names the column and the value, then prints the whole row: keep the first part.
            let message = "\(error)"
            let cut = message.range(of: ", column index:") ?? message.range(of: ", row: [")
            why = String(message[..<(cut?.lowerBound ?? message.endIndex)].prefix(300))
        }
        if !dates.isEmpty, dates.allSatisfy(Self.neverWhenNull.contains) {
            let assignments = dates.map { "\($0) = NULL" }.joined(separator: ", ")
            repair =
                "UPDATE runs SET \(assignments) WHERE id = '\(id.replacingOccurrences(of: "'", with: "''"))'"
        }
    }

    /// One line for `tick` and the error of `run`.
    var description: String {
        var text = "run \(id) of job \(job) cannot be read: \(why)"
        if let repair {
            text +=
                "; to repair it (a deadline past year 9999 is no deadline), in the workspace: "
                + "sqlite3 cache/offpeak.sqlite \"\(repair)\""
        }
        return text
    }

    /// What `run` of its job says: the job's unfinished run cannot be resumed, and no second run is
    /// started beside it (its items would be asked twice).
    var error: OffpeakError {
        OffpeakError(
            .ioError,
            description
                + (repair == nil
                    ? "; its items stay in the store, and no new run of \(job) starts beside it" : ""))
    }

    /// A column's value as text, whatever it holds.
    private static func text(_ row: Row, _ column: String) -> String {
        let value = (row[column] as DatabaseValue?) ?? .null
        return String.fromDatabaseValue(value) ?? value.description
    }
}
