import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

struct WorkspaceLockTests {
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
        guard case .acquired = try WorkspaceLock.acquire(place) else {
            Issue.record("the lock was not released with its holder")
            return
        }
    }

    @Test func tickWhileAnotherHoldsTheWorkspaceDoesNothing() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\n")
        let context = try JobRunnerIntegrationTests.context(workspace)
        guard case .acquired(let held) = try WorkspaceLock.acquire(context.workspace) else {
            Issue.record("lock refused")
            return
        }
        let report = try Tick(context: context).run(Tick.Options())
        #expect(report.status == 0)
        #expect(report.skipped?.contains("another tick is running") == true)
        withExtendedLifetime(held) {}
    }
}
