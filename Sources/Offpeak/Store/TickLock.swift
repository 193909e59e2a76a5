import Foundation

/// What a tick holds for its whole life (`Store.lockTick`), so that ticks that must not overlap
/// never do, and `offpeak store copy` reads a store no tick writes.
///
/// On SQLite the store is one workspace's file, and the lock is the workspace's `cache/tick.lock`
/// (`WorkspaceLock`), taken before the file is opened: one tick at a time per workspace. On
/// PostgreSQL, where hosts with folders of their own share the store, a file coordinates nothing:
/// the lock is a row of the store's that the tick renews (`PostgresStoreLock`): one tick at a time
/// per host name, whatever machine and folder it runs in, ticks of different hosts side by side.
/// Either way it goes when the process goes: a file lock at once, a row at once on the same machine
/// and within a minute elsewhere.
final class TickLock {
    /// The store, opened first to take the lock on its connection (PostgreSQL); nil when the lock
    /// comes before the store is opened (SQLite).
    let store: Store?
    private let held: Held

    private enum Held {
        case file(WorkspaceLock)
        case row(PostgresStoreLock)
    }

    private init(store: Store?, held: Held) {
        self.store = store
        self.held = held
    }

    enum Outcome {
        case acquired(TickLock)
        case held(by: Holder)
    }

    /// Who holds the lock a tick was refused.
    enum Holder: Equatable {
        /// SQLite: another process in this workspace, its pid when the lock file says.
        case process(Int32?)
        /// PostgreSQL: another tick of this host, in whichever folder and on whichever machine.
        case host(String)
    }

    /// Takes the tick lock of the store `opening` names, for a tick of `host`.
    /// - Throws: `.temporaryFailure` while `offpeak store copy` reads a PostgreSQL store; what
    ///   opening the store throws.
    static func acquire(_ opening: Store.Opening, host: String) throws(OffpeakError) -> Outcome {
        switch opening.location {
        case .sqlite:
            switch try WorkspaceLock.acquire(opening.workspace) {
            case .acquired(let lock): return .acquired(TickLock(store: nil, held: .file(lock)))
            case .held(let pid): return .held(by: .process(pid))
            }
        case .postgres(let url):
            let connection = try PostgresMigrations.connect(
                url, environment: opening.environment, logger: opening.logger)
            // As `Store.open` refuses it: a moved store is not this tick's to write.
            if let sentence = try connection.movedSentence() {
                connection.close()
                throw StoreMove.error(sentence)
            }
            guard let locks = try connection.lockTick(host: host) else { return .held(by: .host(host)) }
            return .acquired(TickLock(store: Store(PostgresEngine(connection)), held: .row(locks)))
        }
    }
}
