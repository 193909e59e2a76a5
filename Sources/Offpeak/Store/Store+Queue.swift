import Foundation
import GRDB

extension Store {
    /// Adds submitted requests to the job's open run, creating `newRun` when it has none and
    /// something is to be added, in one transaction: an intake with nothing new makes no run. A
    /// request whose item id the run already has is refused, not added twice.
    /// - Returns: for each request, in order, `nil` if it was added, else the id of the run that
    ///   already has its item.
    func enqueue(_ requests: [RequestRecord], job: String, newRun: RunRecord) throws(OffpeakError)
        -> [String?]
    {
        guard !requests.isEmpty else { return [] }
        return try write { db in
            let open = try Store.resumableRun(in: db, job: job)
            var outcomes: [String?] = []
            var seen: Set<[UInt8]> = []  // by bytes, as SQLite compares them
            var added: [RequestRecord] = []
            for request in requests {
                let holder: String?
                if !seen.insert(Array(request.itemId.utf8)).inserted {
                    holder = open?.id ?? newRun.id
                } else if let open, try Store.hasItem(request.itemId, run: open.id, in: db) {
                    holder = open.id
                } else {
                    holder = nil
                    added.append(request)
                }
                outcomes.append(holder)
            }
            guard !added.isEmpty else { return outcomes }
            let runID = open?.id ?? newRun.id
            if open == nil { try newRun.insert(db) }
            var position =
                try Int.fetchOne(
                    db, sql: "SELECT MAX(position) FROM requests WHERE run_id = ?", arguments: [runID])
                ?? -1
            for var request in added {
                position += 1
                request.runId = runID
                request.position = position
                try request.insert(db)
            }
            // Every request of the run, as the counters hold them (`run_items.requests`).
            try db.execute(
                sql: "UPDATE runs SET items_total = ? WHERE id = ?",
                arguments: [try Store.itemCounts(db, runID: runID).requests, runID])
            return outcomes
        }
    }

    private static func hasItem(_ itemID: String, run runID: String, in db: Database) throws -> Bool {
        try RequestRecord.filter(Column("run_id") == runID && Column("item_id") == itemID).fetchCount(db) > 0
    }

    /// One request by id, with its result when it has one.
    func request(id: String) throws(OffpeakError) -> (RequestRecord, ResultRecord?)? {
        try read { db in
            guard let request = try RequestRecord.fetchOne(db, key: id) else { return nil }
            return (request, try ResultRecord.fetchOne(db, key: id))
        }
    }
}
