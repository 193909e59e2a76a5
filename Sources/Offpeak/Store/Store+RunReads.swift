import Foundation
import GRDB

/// Runs as a list read them: the rows that decode, and the ones that do not, named.
struct RunRows: Sendable {
    var runs: [RunRecord] = []
    var unreadable: [UnreadableRun] = []
}

extension Store {
    /// The newest run of `job` that has not finished, if any. When that run's row cannot be read,
    /// an error (74) says which and how to repair it: the job is neither resumed nor started anew
    /// beside it.
    func latestResumableRun(job: String) throws(OffpeakError) -> RunRecord? {
        try read { db in try Store.resumableRun(in: db, job: job) }
    }

    static let openStates = [RunState.idle, .running, .waiting, .interrupted].map(\.rawValue)

    static func resumableRun(in db: Database, job: String) throws -> RunRecord? {
        let request = RunRecord.filter(Column("job") == job).filter(openStates.contains(Column("state")))
            .order(Column("created_at").desc).limit(1)
        let rows = try fetchRuns(request, db)
        if let unreadable = rows.unreadable.first { throw unreadable.error }
        return rows.runs.first
    }

    /// The run, or nil when there is none; an error (74) when its row cannot be read.
    func run(id: String) throws(OffpeakError) -> RunRecord? {
        let rows = try read { db in try Store.fetchRuns(RunRecord.filter(key: id), db) }
        if let unreadable = rows.unreadable.first { throw unreadable.error }
        return rows.runs.first
    }

    /// The run, or nil when there is none or its row cannot be read: for reports that go on without it.
    func readableRun(id: String) throws(OffpeakError) -> RunRecord? {
        try read { db in try Store.fetchRuns(RunRecord.filter(key: id), db) }.runs.first
    }

    /// Runs, newest first; rows that cannot be read are left out.
    func runs(limit: Int = 50) throws(OffpeakError) -> [RunRecord] {
        try runRows(limit: limit).runs
    }

    /// The newest `limit` runs, those that cannot be read named apart.
    func runRows(limit: Int = 50) throws(OffpeakError) -> RunRows {
        try read { db in try Store.fetchRuns(RunRecord.order(Column("created_at").desc).limit(limit), db) }
    }

    /// Decodes each row on its own, so one that does not decode is named instead of failing the read.
    static func fetchRuns(_ request: QueryInterfaceRequest<RunRecord>, _ db: Database) throws -> RunRows {
        var rows = RunRows()
        let cursor = try Row.fetchCursor(db, request)
        while let row = try cursor.next() {
            do { rows.runs.append(try RunRecord(row: row)) } catch {
                rows.unreadable.append(UnreadableRun(row: row, error: error))
            }
        }
        return rows
    }

    /// Runs that have not finished, oldest first; rows that cannot be read are left out.
    func resumableRuns() throws(OffpeakError) -> [RunRecord] {
        try resumableRunRows().runs
    }

    /// Runs that have not finished, oldest first, those that cannot be read named apart.
    func resumableRunRows() throws(OffpeakError) -> RunRows {
        try read { db in
            try Store.fetchRuns(
                RunRecord.filter(Store.openStates.contains(Column("state"))).order(Column("created_at")), db)
        }
    }
}
