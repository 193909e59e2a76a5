import Foundation
import PostgresNIO

/// The session advisory locks that keep ticks and copies of one PostgreSQL store apart (`TickLock`):
/// held on the connection that took them until they are released or the connection goes (the
/// server drops them when the process ends, however it ends, as the kernel drops a file lock).
///
/// - one per host name (`offpeak tick HOST`), exclusive: one tick at a time per host, whatever
///   machine and folder it runs in;
/// - one over the store (`offpeak store`): shared by the ticks of every host, which never wait for
///   one another; exclusive for `offpeak store copy`, which reads the store while no tick writes it.
extension PostgresStore {
    /// Takes a tick's locks for `host`.
    /// - Returns: the locks, or nil when another tick of `host` holds the host's lock.
    /// - Throws: `.temporaryFailure` while a copy holds the store's lock; the store's faults.
    func lockTick(host: String) throws(OffpeakError) -> PostgresTickLocks? {
        let (link, taken) = try setAside { () throws(OffpeakError) in try takeTickLocks(host: host) }
        guard taken else {
            giveBack(link)
            return nil
        }
        return PostgresTickLocks(store: self, link: link, host: host)
    }

    /// Takes a tick's locks on this thread's connection; false when another tick of `host` holds
    /// the host's lock.
    private func takeTickLocks(host: String) throws(OffpeakError) -> Bool {
        let hostKey = PostgresTickLocks.hostKey(host)
        // Its connection ends within a minute of a host killed while cut off from the server,
        // and the locks with it (`PostgresLink.keepalives`).
        guard try tryLock("SELECT pg_try_advisory_lock(hashtextextended(\(hostKey), 0))") else {
            return false
        }
        guard try tryLock("SELECT pg_try_advisory_lock_shared(hashtextextended(\(Self.storeKey), 0))") else {
            _ = try? query("SELECT pg_advisory_unlock(hashtextextended(\(hostKey), 0))")
            throw OffpeakError(
                .temporaryFailure,
                "a copy of this store is running (offpeak store copy); tick again once it ends")
        }
        return true
    }

    /// Takes the store's lock exclusively, for a copy that reads it, on a connection kept until the
    /// store closes.
    /// - Throws: `.temporaryFailure` while ticks (or another copy) hold it; the store's faults.
    func lockForCopy() throws(OffpeakError) {
        let (link, _) = try setAside { () throws(OffpeakError) in try takeCopyLock() }
        hold(link)
    }

    private func takeCopyLock() throws(OffpeakError) {
        // A tick that ends between the try and the count leaves nothing to name: try once more.
        for _ in 0..<2 {
            if try tryLock("SELECT pg_try_advisory_lock(hashtextextended(\(Self.storeKey), 0))") { return }
            let (ticks, copies) = try storeLockHolders()
            if copies > 0 {
                throw OffpeakError(
                    .temporaryFailure, "another copy of this store is running; copy once it ends")
            }
            if ticks > 0 {
                throw OffpeakError(
                    .temporaryFailure,
                    "\(Plural.count(ticks, "tick")) \(ticks == 1 ? "is" : "are") running on this store; "
                        + "copy once \(ticks == 1 ? "it ends" : "they end")")
            }
        }
        throw OffpeakError(.temporaryFailure, "ticks are running on this store; copy once they end")
    }

    /// The key every tick shares and a copy takes alone.
    static let storeKey = "offpeak store"

    /// Runs a `pg_try_advisory_lock…` statement; whether it took the lock.
    private func tryLock(_ statement: PostgresQuery) throws(OffpeakError) -> Bool {
        guard let row = try query(statement).first else { return false }
        return try decode(row, as: Bool.self)
    }

    /// The sessions holding the store's lock in this database: shared (ticks) and exclusive (a copy).
    /// A `bigint` key shows in `pg_locks` split in two: its high half in `classid`, its low one in
    /// `objid`, `objsubid` 1.
    private func storeLockHolders() throws(OffpeakError) -> (shared: Int, exclusive: Int) {
        let rows = try query(
            """
            SELECT count(*) FILTER (WHERE mode = 'ShareLock'), count(*) FILTER (WHERE mode = 'ExclusiveLock')
            FROM pg_locks
            WHERE locktype = 'advisory' AND granted AND objsubid = 1
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(\(Self.storeKey), 0)
            """)
        guard let row = rows.first else { return (0, 0) }
        let (shared, exclusive) = try decode(row, as: (Int, Int).self)
        return (shared, exclusive)
    }
}

/// A tick's locks on a PostgreSQL store (`PostgresStore.lockTick`), on a connection of their own,
/// released when this goes.
final class PostgresTickLocks {
    private let store: PostgresStore
    private let link: PostgresLink
    private let host: String

    fileprivate init(store: PostgresStore, link: PostgresLink, host: String) {
        self.store = store
        self.link = link
        self.host = host
    }

    /// The host's key: a host's ticks take turns, whichever folder and machine they run in.
    static func hostKey(_ host: String) -> String { "offpeak tick " + host }

    deinit {
        // A connection gone has dropped them already; one that cannot unlock is closed, which does.
        do {
            _ = try link.run(
                """
                SELECT pg_advisory_unlock(hashtextextended(\(Self.hostKey(host)), 0)),
                    pg_advisory_unlock_shared(hashtextextended(\(PostgresStore.storeKey), 0))
                """)
        } catch {
            link.close()
        }
        store.giveBack(link)
    }
}
