import Foundation

/// The providers' limits held across every process on the store: each grant of requests and
/// tokens (counted in a minute window) and each call's slot (`SharedLimitBook`, which the call
/// limiter asks), and a look at what is held, for tests and reports.
///
/// One role of the store seam (`Store`), played by both engines: SQLite (`SQLiteStore`, whose one
/// writer makes each ask take its turn) and PostgreSQL (`PostgresEngine`, a transaction advisory
/// lock per provider key). A grant's row outlives its use by a minute (its place in the window);
/// a slot is held until given back, its owner is found dead on this host, or `slotTTL` passes
/// without the owner asking again.
protocol LimitStore: SharedLimitBook {
    /// The grants held on `key` (`SharedLimits.key`), as the next ask would read them.
    func limitGrants(key: String) throws(OffpeakError) -> [SharedLimitWindow.Grant]
}
