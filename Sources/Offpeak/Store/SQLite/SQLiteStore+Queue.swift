import Foundation
import GRDB

extension SQLiteStore {
    func enqueue(_ requests: [RequestRecord], job: String, newRun: RunRecord) throws(OffpeakError)
        -> [String?]
    {
        guard !requests.isEmpty else { return [] }
        return try write { db in
            let open = try SQLiteStore.resumableRun(in: db, job: job)
            let runID = open?.id ?? newRun.id
            var seen: Set<[UInt8]> = []  // by bytes, as SQLite compares them
            let fresh = requests.map { seen.insert(Array($0.itemId.utf8)).inserted }
            // A new run holds nothing yet, so only a repeat within `requests` is refused there (and
            // the first request is always added: a run is made only when something is).
            if open == nil { try newRun.insert(db) }
            var position =
                try Int.fetchOne(
                    db, sql: "SELECT MAX(position) FROM requests WHERE run_id = ?", arguments: [runID])
                ?? -1
            var outcomes: [String?] = []
            outcomes.reserveCapacity(requests.count)
            var inserter = try RequestInserter(db)
            for (request, fresh) in zip(requests, fresh) {
                guard fresh else {
                    outcomes.append(runID)
                    continue
                }
                var request = request
                request.runId = runID
                request.position = position + 1
                // An item the open run already has is left as it is, and refused.
                if try inserter.insert(request) {
                    position += 1
                    outcomes.append(nil)
                } else {
                    outcomes.append(runID)
                }
            }
            guard outcomes.contains(where: { $0 == nil }) else { return outcomes }
            // Every request of the run, as the counters hold them (`run_items.requests`).
            try db.execute(
                sql: "UPDATE runs SET items_total = ? WHERE id = ?",
                arguments: [try SQLiteStore.itemCounts(db, runID: runID).requests, runID])
            return outcomes
        }
    }

    func request(id: String) throws(OffpeakError) -> (RequestRecord, ResultRecord?)? {
        try read { db in
            guard let request = try StoredPayload.expand(RequestRecord.fetchOne(db, key: id), db) else {
                return nil
            }
            return (request, try ResultRecord.fetchOne(db, key: id))
        }
    }
}
