import Foundation
import GRDB

extension Store {
    /// Adds submitted requests to the job's open run, creating `newRun` when it has none, in one
    /// transaction. A request whose item id the run already has is refused, not added twice.
    /// - Returns: for each request, in order, `nil` if it was added, else why it was refused.
    func enqueue(_ requests: [RequestRecord], job: String, newRun: RunRecord) throws(OffpeakError)
        -> [String?]
    {
        try write { db in
            var run = try Store.resumableRun(in: db, job: job)
            if run == nil {
                try newRun.insert(db)
                run = newRun
            }
            guard let runID = run?.id else { return [] }
            var position =
                try Int.fetchOne(
                    db, sql: "SELECT MAX(position) FROM requests WHERE run_id = ?", arguments: [runID])
                ?? -1
            var outcomes: [String?] = []
            for var request in requests {
                let taken = try RequestRecord.filter(
                    Column("run_id") == runID && Column("item_id") == request.itemId
                )
                .fetchCount(db)
                guard taken == 0 else {
                    outcomes.append("id '\(request.itemId)' was already submitted to run \(runID)")
                    continue
                }
                position += 1
                request.runId = runID
                request.position = position
                try request.insert(db)
                outcomes.append(nil)
            }
            try db.execute(
                sql:
                    "UPDATE runs SET items_total = (SELECT COUNT(*) FROM requests WHERE run_id = ?) WHERE id = ?",
                arguments: [runID, runID])
            return outcomes
        }
    }

    /// One request by id, with its result when it has one.
    public func request(id: String) throws(OffpeakError) -> (RequestRecord, ResultRecord?)? {
        try read { db in
            guard let request = try RequestRecord.fetchOne(db, key: id) else { return nil }
            return (request, try ResultRecord.fetchOne(db, key: id))
        }
    }
}
