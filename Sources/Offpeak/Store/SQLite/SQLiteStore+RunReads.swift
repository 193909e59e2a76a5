import Foundation
import GRDB

extension SQLiteStore {
    func latestResumableRun(job: String) throws(OffpeakError) -> RunRecord? {
        try read { db in try SQLiteStore.resumableRun(in: db, job: job) }
    }

    static let openStates = [RunState.idle, .running, .waiting, .interrupted].map(\.rawValue)

    /// The states of runs that have finished.
    static let finishedStates = RunState.allCases.filter { !$0.isResumable }.map(\.rawValue)

    func latestFinishedRun(job: String, createdBefore: Date?) throws(OffpeakError) -> RunRecord? {
        var finished = RunRecord.filter(Column("job") == job).filter(
            SQLiteStore.finishedStates.contains(Column("state")))
        if let createdBefore { finished = finished.filter(Column("created_at") < createdBefore) }
        let rows = try read { db in
            try SQLiteStore.fetchRuns(finished.order(Column("created_at").desc).limit(1), db)
        }
        if let unreadable = rows.unreadable.first { throw unreadable.error }
        return rows.runs.first
    }

    static func resumableRun(in db: Database, job: String) throws -> RunRecord? {
        let request = RunRecord.filter(Column("job") == job).filter(openStates.contains(Column("state")))
            .order(Column("created_at").desc).limit(1)
        let rows = try fetchRuns(request, db)
        if let unreadable = rows.unreadable.first { throw unreadable.error }
        return rows.runs.first
    }

    func run(id: String) throws(OffpeakError) -> RunRecord? {
        let rows = try read { db in try SQLiteStore.fetchRuns(RunRecord.filter(key: id), db) }
        if let unreadable = rows.unreadable.first { throw unreadable.error }
        return rows.runs.first
    }

    func readableRun(id: String) throws(OffpeakError) -> RunRecord? {
        try read { db in try SQLiteStore.fetchRuns(RunRecord.filter(key: id), db) }.runs.first
    }

    func runs(limit: Int = 50) throws(OffpeakError) -> [RunRecord] {
        try runRows(limit: limit).runs
    }

    func runRows(limit: Int = 50) throws(OffpeakError) -> RunRows {
        try read { db in
            try SQLiteStore.fetchRuns(RunRecord.order(Column("created_at").desc).limit(limit), db)
        }
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

    func resumableRuns() throws(OffpeakError) -> [RunRecord] {
        try resumableRunRows().runs
    }

    func resumableRunRows() throws(OffpeakError) -> RunRows {
        try read { db in
            try SQLiteStore.fetchRuns(
                RunRecord.filter(SQLiteStore.openStates.contains(Column("state"))).order(
                    Column("created_at")), db)
        }
    }
}
