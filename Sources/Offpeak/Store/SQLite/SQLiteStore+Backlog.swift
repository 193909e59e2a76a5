import Foundation
import GRDB

/// Reads for planning a run a slice at a time: each is a range of an index, so its cost depends on
/// how much it returns, not on how big the run is. (The run loop plans a round at a time from these:
/// `RunSession.nextCalls`.)
extension SQLiteStore {
    func pendingRequests(runID: String, after position: Int? = nil, limit: Int) throws(OffpeakError)
        -> [RequestRecord]
    {
        try read { db in
            var query = RequestRecord.filter(
                Column("run_id") == runID && Column("state") == RequestRecord.State.pending.rawValue)
            if let position { query = query.filter(Column("position") > position) }
            return try StoredPayload.expand(
                query.order(Column("position")).limit(max(0, limit)).fetchAll(db), db)
        }
    }

    func dueRetries(runID: String, by now: Date, limit: Int? = nil) throws(OffpeakError) -> [RequestRecord] {
        try read { db in
            var query = RequestRecord.filter(
                Column("run_id") == runID && Column("state") == RequestRecord.State.retrying.rawValue
                    && (Column("next_attempt_at") == nil || Column("next_attempt_at") <= now)
            )
            .order(Column("position"))
            if let limit { query = query.limit(max(0, limit)) }
            return try StoredPayload.expand(query.fetchAll(db), db)
        }
    }

    func itemCounts(runID: String) throws(OffpeakError) -> ItemCounts {
        try read { db in try SQLiteStore.itemCounts(db, runID: runID) }
    }
}
