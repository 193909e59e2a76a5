import Foundation
import PostgresNIO
import Synchronization

/// The locks that keep ticks and copies of one PostgreSQL store apart (`TickLock`), kept as rows of
/// `store_locks` that their holder renews, not as session advisory locks: behind a pooler in
/// transaction mode (pgbouncer, as many teams run it) each transaction goes to whichever server
/// connection is free, so a session lock would be taken on one connection and given back on
/// another, or held for a client the connection no longer serves. Each decision is one transaction
/// under a transaction advisory lock, which a pooler keeps with its transaction.
///
/// - `tick <host>`: one tick at a time per host name (`offpeak tick HOST`), whatever machine and
///   folder it runs in; ticks of different hosts side by side;
/// - `copy`: `offpeak store copy`, taken only while no tick holds a row, and refusing ticks while
///   it reads the store.
///
/// A row lives while its holder renews it (every third of `lockTTL`, on a thread of its own) and its
/// process runs: one of this machine that is gone holds nothing (`ProcessOwner`), and one killed on
/// another machine lets it lapse within `lockTTL`, as the server dropped a dead connection's
/// session locks within a minute.
extension PostgresStore {
    /// How long a lock row outlives its last renewal.
    static let lockTTL: TimeInterval = 60

    /// The copy's lock row.
    static let copyLock = "copy"

    /// Takes a tick's lock for `host`.
    /// - Returns: the lock, or nil when another tick of `host` holds it.
    /// - Throws: `.temporaryFailure` while a copy holds the store; the store's faults.
    func lockTick(host: String) throws(OffpeakError) -> PostgresStoreLock? {
        let owner = ProcessOwner.current
        let name = "tick " + host
        let taken = try transaction { () throws(OffpeakError) -> Bool in
            let live = try liveLocks()
            if live.contains(where: { $0.name == Self.copyLock }) {
                throw OffpeakError(
                    .temporaryFailure,
                    "a copy of this store is running (offpeak store copy); tick again once it ends")
            }
            // Held, even by this process: a lock is taken once, as a session lock on a connection of
            // its own was.
            if live.contains(where: { $0.name == name }) { return false }
            try insertLock(name, owner: owner, host: host)
            return true
        }
        return taken ? PostgresStoreLock(store: self, name: name, owner: owner) : nil
    }

    /// Takes the store for a copy that reads it, while no tick (or other copy) holds a row.
    /// - Returns: the lock, to release once the copy is done.
    /// - Throws: `.temporaryFailure` while ticks (or another copy) hold the store; its faults.
    func lockForCopy() throws(OffpeakError) -> PostgresStoreLock {
        let owner = ProcessOwner.current
        try transaction { () throws(OffpeakError) in
            let live = try liveLocks()
            if live.contains(where: { $0.name == Self.copyLock }) {
                throw OffpeakError(
                    .temporaryFailure, "another copy of this store is running; copy once it ends")
            }
            let ticks = live.count
            if ticks > 0 {
                throw OffpeakError(
                    .temporaryFailure,
                    "\(Plural.count(ticks, "tick")) \(ticks == 1 ? "is" : "are") running on this store; "
                        + "copy once \(ticks == 1 ? "it ends" : "they end")")
            }
            try insertLock(Self.copyLock, owner: owner, host: "")
        }
        return PostgresStoreLock(store: self, name: Self.copyLock, owner: owner)
    }

    /// The rows held now, read under the locks' transaction lock once those that lapsed, and those of
    /// processes of this machine that are gone, are deleted.
    private func liveLocks() throws(OffpeakError) -> [(name: String, owner: String)] {
        try query("SELECT pg_advisory_xact_lock(hashtextextended('offpeak store locks', 0))")
        try query("DELETE FROM store_locks WHERE expires_at <= now()")
        var live: [(name: String, owner: String)] = []
        for row in try query("SELECT name, owner FROM store_locks") {
            let (name, owner) = try decode(row, as: (String, String).self)
            if ProcessOwner.isAlive(owner) {
                live.append((name, owner))
            } else {
                try query("DELETE FROM store_locks WHERE name = \(name) AND owner = \(owner)")
            }
        }
        return live
    }

    private func insertLock(_ name: String, owner: String, host: String) throws(OffpeakError) {
        try query(
            """
            INSERT INTO store_locks (name, owner, host, expires_at)
            VALUES (\(name), \(owner), \(host), now() + make_interval(secs => \(Self.lockTTL)))
            ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, host = excluded.host,
                expires_at = excluded.expires_at
            """)
    }
}

/// A lock row this process holds (`PostgresStore+Locks`): renewed on a thread of its own every third
/// of its time to live, deleted when released or when this goes.
final class PostgresStoreLock: Sendable {
    private let store: PostgresStore
    private let name: String
    private let owner: String
    private let stop = DispatchSemaphore(value: 0)
    private let released = Mutex(false)

    fileprivate init(store: PostgresStore, name: String, owner: String) {
        self.store = store
        self.name = name
        self.owner = owner
        Thread.detachNewThread { [store, name, owner, stop] in
            while stop.wait(timeout: .now() + PostgresStore.lockTTL / 3) == .timedOut {
                _ = try? store.query(
                    """
                    UPDATE store_locks SET expires_at = now() + make_interval(secs => \(PostgresStore.lockTTL))
                    WHERE name = \(name) AND owner = \(owner)
                    """)
            }
        }
    }

    /// Gives the lock back (once).
    func release() {
        let first = released.withLock { released in
            defer { released = true }
            return !released
        }
        guard first else { return }
        stop.signal()
        _ = try? store.query("DELETE FROM store_locks WHERE name = \(name) AND owner = \(owner)")
    }

    deinit { release() }
}
