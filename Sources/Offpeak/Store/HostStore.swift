import Foundation

/// The hosts that tick against the store: each one's version, its last tick and the conditions it
/// read then, for `offpeak hosts`.
///
/// One role of the store seam (`Store`), played by both engines: SQLite (`SQLiteStore`) and
/// PostgreSQL (`PostgresEngine`).
protocol HostStore: AnyObject, Sendable {
    /// A tick of `host` started at `now`: the host is recorded (first seen now, if it is new) with
    /// its version and conditions, and its last tick's end and status are cleared until this one ends.
    func tickStarted(host: String, version: String, conditions: String, at now: Date) throws(OffpeakError)

    /// The tick of `host` that started last ended at `now` with `status`.
    func tickEnded(host: String, status: Int32, at now: Date) throws(OffpeakError)

    /// Every host seen, with the runs it holds and its calls in flight at `now`, in no set order.
    func hosts(now: Date) throws(OffpeakError) -> [HostRecord]
}
