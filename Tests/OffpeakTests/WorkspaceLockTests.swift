import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

@Suite(.ownThreads) struct WorkspaceLockTests {
    /// Whether `granted` says yes within 10 s, asked every 50 ms. A lock released by its holder can
    /// show as held a moment longer: a child another suite is spawning at that moment holds a copy
    /// of the lock's descriptor until it execs (`O_CLOEXEC` closes it there), which on a loaded
    /// machine can take a while.
    static func grantedOnceReleased(_ granted: () throws -> Bool) throws -> Bool {
        let deadline = Date() + 10
        while try !granted() {
            guard Date() < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return true
    }

    @Test func secondLockerIsToldWhoHoldsItAndGetsItOnceReleased() throws {
        let workspace = try TemporaryWorkspace()
        let place = Workspace(root: workspace.root)
        var first: WorkspaceLock?
        if case .acquired(let lock) = try WorkspaceLock.acquire(place) { first = lock }
        #expect(first != nil, "the first lock was granted")
        guard case .held(let pid) = try WorkspaceLock.acquire(place) else {
            Issue.record("a second lock was granted while the first is held")
            return
        }
        #expect(pid == getpid())
        let mode =
            try FileManager.default.attributesOfItem(
                atPath: workspace.root.appendingPathComponent("cache/tick.lock").path)[.posixPermissions]
            as? Int
        #expect(mode == 0o600)
        first = nil
        let granted = try Self.grantedOnceReleased {
            if case .acquired = try WorkspaceLock.acquire(place) { true } else { false }
        }
        #expect(granted, "the lock was released with its holder")
    }

    @Test func tickWhileAnotherHoldsTheTickLockDoesNothing() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\n")
        let context = try JobRunnerIntegrationTests.context(workspace)
        let host = try context.host()
        guard case .acquired(let held) = try TickLock.acquire(try context.storeOpening(), host: host) else {
            Issue.record("lock refused")
            return
        }
        let report = try Tick(context: context).run(Tick.Options())
        #expect(report.status == 0)
        #expect(
            report.skipped
                == (TestStore.onPostgres
                    ? "another tick of host \(host) is running on this store; nothing to do"
                    : "another tick is running in this workspace (pid \(getpid())); nothing to do"))
        withExtendedLifetime(held) {}
    }

    /// A copy from a SQLite store holds the workspace's lock, as a tick does: refused while a tick
    /// holds it, before the target is reached.
    @Test(.sqliteOnly) func copyFromSQLiteWhileATickRunsIsTemporary() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\n")
        let context = try JobRunnerIntegrationTests.context(workspace)
        guard case .acquired(let held) = try WorkspaceLock.acquire(context.workspace) else {
            Issue.record("lock refused")
            return
        }
        var refused: OffpeakError?
        do { _ = try context.copyStore(to: "postgresql://nobody@127.0.0.1:1/none") } catch { refused = error }
        #expect(refused?.status == .temporaryFailure)
        #expect(
            refused?.description == "a tick is running in this workspace (pid \(getpid())); copy once it ends"
        )
        withExtendedLifetime(held) {}
    }
}
