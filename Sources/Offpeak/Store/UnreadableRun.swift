import Foundation

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

    /// The columns of a run that hold dates.
    static let dateColumns = ["created_at", "started_at", "updated_at", "finished_at", "deadline_at"]

    /// What in `row` (a run's, `RunRules.runColumns`) made `error`: a date that does not read back
    /// is named with its value, and repaired when NULL means the same.
    init(row: some SQLRow, error: OffpeakError) {
        id = (try? row("id", as: String.self)) ?? "?"
        job = (try? row("job", as: String.self)) ?? "?"
        let dates = Self.dateColumns.filter { column in
            (try? row.isNull(column)) == false && (try? row.date(column)) == nil
        }
        if let column = dates.first {
            let value = (try? row.string(column)) ?? "?"
            why = "\(column) is \"\(value)\", not a date the store can read (years 1 to 9999)"
        } else {
            why = String(
                ([error.message] + [error.cause].compactMap { $0 }).joined(separator: ": ").prefix(300))
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
}
