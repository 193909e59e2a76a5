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

    /// Notes that a route could not answer, for every process on the store: its calls go to its
    /// fallbacks until `outage.until` (a later note of the same route replaces it).
    func noteOutage(_ outage: ProviderOutage) throws(OffpeakError)

    /// The routes down at `now`, by key.
    func outages(now: Date) throws(OffpeakError) -> [String: ProviderOutage]
}
