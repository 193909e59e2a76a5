import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The tick lock (`TickLock`) on both engines: the workspace's file on SQLite, the store's lock rows
/// on PostgreSQL (one per host, and the copy's, which no tick runs beside).
@Suite(.ownThreads, .serialized) struct TickLockTests {
    static func opening(_ workspace: TemporaryWorkspace) throws -> Store.Opening {
        let environment = try workspace.storeEnvironment()
        return Store.Opening(
            workspace: Workspace(root: workspace.root),
            location: try StoreLocation.resolve(configured: .sqlite, environment: environment),
            environment: environment, logger: Logger(label: "test"))
    }

    /// The holder a second tick of `host` is told of, `holder` taking its lock.
    static func refused(_ opening: Store.Opening, host: String) throws -> TickLock.Holder? {
        switch try TickLock.acquire(opening, host: host) {
        case .acquired: nil
        case .held(let holder): holder
        }
    }

    @Test func aSecondTickOfTheHostIsToldWhoHoldsItAndGetsItOnceReleased() throws {
        let workspace = try TemporaryWorkspace()
        let opening = try Self.opening(workspace)
        var first: TickLock?
        if case .acquired(let lock) = try TickLock.acquire(opening, host: "box-a") { first = lock }
        #expect(first != nil, "the first lock was granted")
        #expect(first?.store != nil || !TestStore.onPostgres, "PostgreSQL: the store the lock is on")
        #expect(
            try Self.refused(opening, host: "box-a")
                == (TestStore.onPostgres ? .host("box-a") : .process(getpid())))
        // Another host: on PostgreSQL it ticks alongside; on SQLite the workspace is locked.
        let other = try TickLock.acquire(opening, host: "box-b")
        if TestStore.onPostgres {
            guard case .acquired = other else {
                Issue.record("another host's tick was refused")
                return
            }
        } else {
            guard case .held(by: .process(getpid())) = other else {
                Issue.record("a second tick in the workspace was granted")
                return
            }
        }
        first = nil
        #expect(
            try WorkspaceLockTests.grantedOnceReleased { try Self.refused(opening, host: "box-a") == nil },
            "released with its holder")
    }

    /// A host killed while cut off from the server leaves its session to the server's keepalives:
    /// every connection of the store, the tick lock's among them, asks for them within a minute,
    /// not the system's two hours.
    @Test(.enabled(if: TestStore.onPostgres, "the store's lock is PostgreSQL's"))
    func aTicksSessionAsksForKeepalivesWithinAMinute() throws {
        let workspace = try TemporaryWorkspace()
        guard case .acquired(let lock) = try TickLock.acquire(try Self.opening(workspace), host: "box-a"),
            let store = lock.store
        else {
            Issue.record("the lock was not granted")
            return
        }
        let settings = try store.values(
            """
            SELECT current_setting('tcp_keepalives_idle') || ' ' || current_setting('tcp_keepalives_interval')
                || ' ' || current_setting('tcp_keepalives_count')
            """, as: String.self)
        #expect(settings == ["30 10 3"])
    }

    @Test(.enabled(if: TestStore.onPostgres, "the store's lock is PostgreSQL's"))
    func aCopyAndTheTicksOfEveryHostExcludeEachOther() throws {
        let workspace = try TemporaryWorkspace()
        let opening = try Self.opening(workspace)
        guard case .postgres(let url) = opening.location else {
            Issue.record("not on PostgreSQL")
            return
        }
        func connect() throws -> PostgresStore {
            try PostgresStore.connect(url, environment: opening.environment, logger: opening.logger)
        }
        var copying: [PostgresStoreLock] = []
        func copyRefusal(_ copy: PostgresStore) -> String? {
            do {
                copying.append(try copy.lockForCopy())
                return nil
            } catch {
                #expect(error.status == .temporaryFailure)
                return error.description
            }
        }
        var ticks: [TickLock] = []
        for host in ["box-a", "box-b"] {
            if case .acquired(let lock) = try TickLock.acquire(opening, host: host) { ticks.append(lock) }
        }
        #expect(ticks.count == 2)
        let copy = try connect()
        defer { copy.close() }
        #expect(copyRefusal(copy) == "2 ticks are running on this store; copy once they end")
        ticks.removeLast()
        #expect(copyRefusal(copy) == "1 tick is running on this store; copy once it ends")
        ticks.removeAll()
        #expect(copyRefusal(copy) == nil, "the copy holds the store")

        var refused: OffpeakError?
        do { _ = try TickLock.acquire(opening, host: "box-c") } catch { refused = error }
        #expect(refused?.status == .temporaryFailure)
        #expect(
            refused?.description
                == "a copy of this store is running (offpeak store copy); tick again once it ends")
        let another = try connect()
        defer { another.close() }
        #expect(copyRefusal(another) == "another copy of this store is running; copy once it ends")
        // The host's lock was given back with the refusal: the copy done, the host ticks.
        #expect(copying.count == 1)
        copying.removeAll()
        guard case .acquired = try TickLock.acquire(opening, host: "box-c") else {
            Issue.record("a tick was refused once the copy ended")
            return
        }
    }
}
