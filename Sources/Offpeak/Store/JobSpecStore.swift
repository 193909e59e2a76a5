import Foundation

/// The spec each host runs each job with, so hosts sharing a store notice when the same job name
/// has different spec content on two of them (issue 23, item 7) instead of mixing the two in one
/// run.
///
/// One role of the store seam (`Store`), played by both engines: SQLite (`SQLiteStore`) and
/// PostgreSQL (`PostgresEngine`).
protocol JobSpecStore: AnyObject, Sendable {
    /// Records each spec as its host's for its job, replacing what that host recorded before, in one
    /// transaction.
    func recordJobSpecs(_ records: [JobSpecRecord]) throws(OffpeakError)

    /// Every host's spec of every job, recorded at or after `since`, in no set order.
    func jobSpecs(seenSince since: Date) throws(OffpeakError) -> [JobSpecRecord]
}
