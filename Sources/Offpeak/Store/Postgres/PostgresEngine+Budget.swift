import Foundation
import PostgresNIO

/// The budgets' lock on PostgreSQL (`SQLLock.budgets`): what SQLite's one writer gives (two
/// processes never both take the last dollar) comes from one transaction advisory lock, so a
/// reservation's check and insert take turns with every other's, across processes and hosts. The
/// reservations themselves are decided once, above both engines (`LedgerStore+Budget`).
extension PostgresEngine {
    /// Takes the budgets' transaction advisory lock: reservations are checked and made one at a time.
    func lockBudgets() throws(OffpeakError) {
        try store.query("SELECT pg_advisory_xact_lock(hashtextextended('offpeak budget', 0))")
    }
}
