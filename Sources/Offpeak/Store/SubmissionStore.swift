import Foundation

/// Submissions: requests handed in with `offpeak submit` or a spool folder, queued into their job's open run, and looked up by id.
///
/// One role of the store seam (`Store`), played by both engines: SQLite (`SQLiteStore`) and
/// PostgreSQL (`PostgresEngine`).
protocol SubmissionStore: AnyObject, Sendable {
    /// Adds submitted requests to the job's open run, creating `newRun` when it has none and
    /// something is to be added, in one transaction: an intake with nothing new makes no run. A
    /// request whose item id the run already has is refused, not added twice.
    /// - Returns: for each request, in order, `nil` if it was added, else the id of the run that
    ///   already has its item.
    func enqueue(_ requests: [RequestRecord], job: String, newRun: RunRecord) throws(OffpeakError)
        -> [String?]

    /// One request by id, with its result when it has one.
    func request(id: String) throws(OffpeakError) -> (RequestRecord, ResultRecord?)?
}
