import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The host in the store (issue 23, item 1): every lease, budget reservation and ledger row names
/// the host that wrote it, and each tick records its host's start, end, exit status and conditions
/// (`HostStore`). On the pass's engine (`TestStore`).
@Suite(.ownThreads) struct HostStoreTests {
    typealias F = RoleFixtures

    static func context(_ workspace: TemporaryWorkspace, host: String) throws -> WorkspaceContext {
        try WorkspaceContext(
            workspace: Workspace(root: workspace.root),
            environment: try workspace.environment(["OFFPEAK_HOST": host]), logger: Logger(label: "test"))
    }

    @Test func aLeaseAndAReservationNameTheirHostAndCountAsItsHoldings() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        try store.runs.insert(run: F.run("r1"), requests: F.requests(2, run: "r1"))
        try store.runs.insert(run: F.run("r2"), requests: [])
        let now = Date()
        #expect(
            try store.leases.acquireLease(runID: "r1", owner: "a:1", host: "box-a", ttl: 600, now: now) == nil
        )
        #expect(
            try store.leases.acquireLease(runID: "r2", owner: "b:1", host: "box-b", ttl: 1, now: now - 60)
                == nil)
        let ask = BudgetAsk(job: "j", runID: "r1", owner: "a:1", host: "box-a", dollars: 0.5, tokens: 10)
        _ = try store.ledger.reserveBudget(
            ask, limits: BudgetLimits(workspace: WorkspaceBudget(perDay: 100)), now: now
        ).get()
        #expect(
            try store.values("SELECT host FROM leases ORDER BY run_id", as: String.self) == [
                "box-a", "box-b",
            ])
        #expect(try store.values("SELECT host FROM budget_reservations", as: String.self) == ["box-a"])
        // A helper on box-b holds r1 by its claim on a round, not the lease: its call counts too.
        #expect(
            try store.leases.claimRound(
                runID: "r1", owner: "b:2", host: "box-b", limit: 1, ttl: 600, now: now
            )
            .count == 1)
        var helper = ask
        (helper.owner, helper.host) = ("b:2", "box-b")
        _ = try store.ledger.reserveBudget(
            helper, limits: BudgetLimits(workspace: WorkspaceBudget(perDay: 100)), now: now
        ).get()

        try store.hosts.tickStarted(host: "box-a", version: "1.0", conditions: "on AC", at: now - 5)
        try store.hosts.tickStarted(host: "box-b", version: "1.1", conditions: "offline", at: now - 5)
        let hosts = try store.hosts.hosts(now: now).sorted { $0.name < $1.name }
        #expect(hosts.map(\.name) == ["box-a", "box-b"])
        #expect(hosts.map(\.runsHeld) == [1, 0], "box-b's lease has expired")
        #expect(hosts.map(\.callsInFlight) == [1, 1])
        #expect(hosts.map(\.version) == ["1.0", "1.1"])
        #expect(hosts.map(\.conditions) == ["on AC", "offline"])
    }

    @Test func aTickStartIsRecordedOnceAndItsEndWithItsStatus() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        let t0 = F.t0
        try store.hosts.tickStarted(host: "box-a", version: "1.0", conditions: "on AC", at: t0)
        var host = try #require(try store.hosts.hosts(now: t0).first)
        #expect(host.firstSeenAt == t0 && host.tickStartedAt == t0)
        #expect(host.tickEndedAt == nil && host.tickStatus == nil)
        try store.hosts.tickEnded(host: "box-a", status: 75, at: t0 + 3)
        host = try #require(try store.hosts.hosts(now: t0).first)
        #expect(host.tickEndedAt == t0 + 3 && host.tickStatus == 75)
        // The next tick: first seen stays, the last tick's end is cleared until it ends.
        try store.hosts.tickStarted(host: "box-a", version: "1.1", conditions: "on battery", at: t0 + 60)
        host = try #require(try store.hosts.hosts(now: t0).first)
        #expect(host.firstSeenAt == t0 && host.tickStartedAt == t0 + 60 && host.version == "1.1")
        #expect(host.tickEndedAt == nil && host.tickStatus == nil && host.conditions == "on battery")
        try store.hosts.tickEnded(host: "box-a", status: 0, at: t0 + 61)
        #expect(try store.hosts.hosts(now: t0).map(\.tickStatus) == [0])
    }

    @Test func everyLedgerRowOfARunNamesItsHost() throws {
        let sim = try SimProcess()
        let workspace = try JobRunnerIntegrationTests.workspace(
            sim: sim, documents: 3, budget: "budget: {per_day: 5}")
        for _ in 0..<2 {  // calls, then cache hits
            let context = try Self.context(workspace, host: "box-9")
            #expect(try context.run(try context.loadJob("docs")).status == .ok)
        }
        let store = try workspace.openStore()
        #expect(try store.count("ledger") == 6)
        #expect(try store.values("SELECT DISTINCT host FROM ledger", as: String.self) == ["box-9"])
        #expect(try store.count("ledger", where: "cache_hit") == 3)
    }

    @Test func aTickRecordsItsHostVersionConditionsAndHowItEnded() throws {
        let workspace = try TemporaryWorkspace()
        let sysfs = try SwitchableSysfs("ac-wifi")
        let context = try Self.context(workspace, host: "box-1")
        let gate = context.gate(sysfsRoot: sysfs.root.path)
        let before = Date()
        #expect(try Tick(context: context).run(Tick.Options(gate: gate, version: "9.9.9")).status == 0)
        let store = try workspace.openStore()
        var host = try #require(try store.hosts.hosts(now: Date()).first)
        #expect(host.name == "box-1" && host.version == "9.9.9" && host.tickStatus == 0)
        #expect(host.conditions == "on AC (54 %); online, unmetered (wlan0)")
        #expect(host.tickStartedAt >= before - 0.001)
        #expect(try #require(host.tickEndedAt) >= host.tickStartedAt)

        // A tick that fails (a spec it cannot read: 65) records its status too.
        try workspace.write("jobs/broken.yaml", "kind: nonsense\n")
        try sysfs.switchTo("battery-wwan")
        let failed = try Tick(context: context).run(Tick.Options(gate: gate, version: "9.9.9"))
        #expect(failed.status == 65)
        host = try #require(try store.hosts.hosts(now: Date()).first)
        #expect(host.tickStatus == 65)
        #expect(host.conditions.hasPrefix("on battery"))
        #expect(try store.hosts.hosts(now: Date()).count == 1)
    }
}
