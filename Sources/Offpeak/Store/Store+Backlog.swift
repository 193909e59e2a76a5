import Foundation
import GRDB

/// Reads for planning a run a slice at a time: each is a range of an index, so its cost depends on
/// how much it returns, not on how big the run is. (The run loop plans a round at a time from these:
/// `RunSession.nextCalls`.)
extension Store {
    /// The run's next `limit` pending requests in item order, after the one at `position` (from the
    /// start when nil): page through a backlog of any size by passing the last position seen.
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

    /// The run's requests waiting to be retried whose time has come by `now` (or that have no time), in
    /// item order.
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

    /// The run's items by state, as its commits left them: one row, however big the run
    /// (`run_items`, kept by triggers). The `runs` row holds the same numbers as of the last commit.
    func itemCounts(runID: String) throws(OffpeakError) -> ItemCounts {
        try read { db in try Store.itemCounts(db, runID: runID) }
    }
}
