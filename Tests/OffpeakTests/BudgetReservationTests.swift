import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Reservations against the workspace's and the jobs' budgets (issue 14, item 1), on a real store
/// file opened twice, as two processes would: a call's worst case is held until its ledger row
/// replaces it, a crashed owner's reservations go with its lease, and days and months are local.
@Suite(.ownThreads) struct BudgetReservationTests {
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        return calendar
    }()

    /// 2026-03-15 12:00 UTC.
    static let midMarch = Date(timeIntervalSince1970: 1_773_576_000)

    static func ask(_ dollars: Double, job: String = "j", run: String = "r1", owner: String) -> BudgetAsk {
        BudgetAsk(job: job, runID: run, owner: owner, host: "test-host", dollars: dollars, tokens: 100)
    }

    /// A store with runs `r1` (job j) and `r2` (job k), each leased to an owner for `ttl`.
    static func store(_ workspace: TemporaryWorkspace, owners: [String: String], ttl: TimeInterval = 300)
        throws
        -> Store
    {
        let store = try StoreTests.store(workspace)
        try store.runs.insert(run: StoreTests.run("r1", job: "j"), requests: [])
        try store.runs.insert(run: StoreTests.run("r2", job: "k"), requests: [])
        for (run, owner) in owners {
            #expect(
                try store.leases.acquireLease(runID: run, owner: owner, host: "test-host", ttl: ttl) == nil)
        }
        return store
    }

    static func spend(_ store: Store, dollars: Double, job: String = "j", run: String = "r1", at: Date) throws
    {
        var entry = ReportTextTests.entry(model: "m", run: run, dollars: dollars, naive: dollars)
        entry.at = at
        entry.job = job
        try store.insertLedger([entry])
    }

    static func reservations(_ store: Store) throws -> Int {
        try store.count("budget_reservations")
    }

    @Test func aSecondProcessCannotTakeWhatTheFirstReservedUntilItsLedgerRowReplacesIt() throws {
        let workspace = try TemporaryWorkspace()
        let me = Store.processOwner
        let other = "elsewhere:1"
        let first = try Self.store(workspace, owners: ["r1": me, "r2": other])
        let second = try StoreTests.store(workspace)  // another connection pool on the same file
        let limits = BudgetLimits(workspace: WorkspaceBudget(perDay: 1.0), calendar: Self.utc)
        let now = Date()
        let held = try first.ledger.reserveBudget(Self.ask(0.6, owner: me), limits: limits, now: now).get()
        let refused = try second.ledger.reserveBudget(
            Self.ask(0.6, job: "k", run: "r2", owner: other), limits: limits, now: now)
        guard case .failure(let refusal) = refused else {
            Issue.record("a reservation passed the daily budget: \(refused)")
            return
        }
        #expect(refusal.period == .day)
        #expect(refusal.waitsForCallsInFlight, "the first call may cost less than its worst case")
        #expect(
            refusal.reason
                == "daily budget reached, resumes after 00:00 ($0.00 spent and $0.6000 reserved of $1.00, "
                + "and the next call may cost up to $0.6000)")
        // The call comes back costing $0.30: its reservation gives way to its ledger row.
        var ledger = ReportTextTests.entry(model: "m", run: "r1", dollars: 0.3, naive: 0.3)
        ledger.at = now
        try first.runs.commitCall(
            run: StoreTests.run("r1", job: "j"), ledger: ledger, results: [], releasing: held)
        #expect(try Self.reservations(first) == 0)
        _ = try second.ledger.reserveBudget(
            Self.ask(0.6, job: "k", run: "r2", owner: other), limits: limits, now: now
        ).get()
        guard
            case .failure(let spent) = try first.ledger.reserveBudget(
                Self.ask(0.2, owner: me), limits: limits, now: now)
        else {
            Issue.record("$0.30 spent and $0.60 reserved left room for $0.20 of $1.00")
            return
        }
        #expect(spent.waitsForCallsInFlight, "another process's call in flight may give some back")
        #expect(try first.ledger.budgetUse(in: limits.periods(at: now).day).spentDollars == 0.3)
    }

    @Test func aCrashedOwnersReservationsGoWithItsLease() throws {
        let workspace = try TemporaryWorkspace()
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let dead = Store.processOwner.split(separator: ":")[0] + ":\(gone.processIdentifier)"
        let store = try Self.store(workspace, owners: ["r1": String(dead), "r2": "elsewhere:2"])
        let limits = BudgetLimits(workspace: WorkspaceBudget(perDay: 1.0), calendar: Self.utc)
        let now = Date()
        _ = try store.ledger.reserveBudget(Self.ask(0.9, owner: String(dead)), limits: limits, now: now).get()
        _ = try store.ledger.reserveBudget(
            Self.ask(0.05, job: "k", run: "r2", owner: "elsewhere:2"), limits: limits, now: now
        ).get()
        // The dead process's $0.90 is dropped at the next reservation; the live lease's $0.05 stays.
        _ = try store.ledger.reserveBudget(
            Self.ask(0.9, job: "k", run: "r2", owner: "elsewhere:2"), limits: limits, now: now
        )
        .get()
        #expect(try Self.reservations(store) == 2)
        // Another host's lease that expired: its reservations go too.
        try store.execute("UPDATE leases SET expires_at = ? WHERE run_id = 'r2'", [now - 1])
        _ = try store.ledger.reserveBudget(
            Self.ask(0.9, job: "k", run: "r2", owner: "elsewhere:3"), limits: limits, now: now
        )
        .get()
        #expect(try Self.reservations(store) == 1, "only the reservation just made is left")
    }

    @Test func theMonthlyBudgetCountsEveryDayOfTheLocalMonth() throws {
        let workspace = try TemporaryWorkspace()
        let me = Store.processOwner
        let store = try Self.store(workspace, owners: ["r1": me])
        let limits = BudgetLimits(workspace: WorkspaceBudget(perDay: 5, perMonth: 1.0), calendar: Self.utc)
        try Self.spend(store, dollars: 0.5, at: Self.midMarch - 13 * 86_400)  // March 2nd
        try Self.spend(store, dollars: 0.4, at: Self.midMarch - 3_600)
        try Self.spend(store, dollars: 9, at: Self.midMarch - 15 * 86_400)  // February 28th
        guard
            case .failure(let refusal) = try store.ledger.reserveBudget(
                Self.ask(0.2, owner: me), limits: limits, now: Self.midMarch)
        else {
            Issue.record("$0.90 spent in March left room for $0.20 of $1.00")
            return
        }
        #expect(refusal.period == .month)
        #expect(!refusal.waitsForCallsInFlight)
        #expect(refusal.reason.hasPrefix("monthly budget reached, resumes on the 1st ($0.9000 spent"))
        let april = Self.midMarch + 17 * 86_400 - 12 * 3_600 + 60  // April 1st, 00:01
        _ = try store.ledger.reserveBudget(Self.ask(0.2, owner: me), limits: limits, now: april).get()
    }

    @Test func aJobsPerDayCountsOnlyItsOwnRuns() throws {
        let workspace = try TemporaryWorkspace()
        let me = Store.processOwner
        let store = try Self.store(workspace, owners: ["r1": me, "r2": me])
        try Self.spend(store, dollars: 0.5, job: "j", run: "r1", at: Self.midMarch)
        let limits = BudgetLimits(workspace: WorkspaceBudget(), jobPerDay: 0.6, calendar: Self.utc)
        guard
            case .failure(let refusal) = try store.ledger.reserveBudget(
                Self.ask(0.2, owner: me), limits: limits, now: Self.midMarch)
        else {
            Issue.record("job j spent $0.50 of its $0.60 per_day, and $0.20 more passed")
            return
        }
        #expect(refusal.jobBudget)
        #expect(refusal.reason.hasPrefix("the job's daily budget reached, resumes after 00:00"))
        _ = try store.ledger.reserveBudget(
            Self.ask(0.5, job: "k", run: "r2", owner: me), limits: limits, now: Self.midMarch
        ).get()
        _ = try store.ledger.reserveBudget(
            Self.ask(0.2, owner: me), limits: limits, now: Self.midMarch + 86_400
        )
        .get()
    }

    @Test func aTokenBudgetCountsEveryToken() throws {
        let workspace = try TemporaryWorkspace()
        let me = Store.processOwner
        let store = try Self.store(workspace, owners: ["r1": me])
        try Self.spend(store, dollars: 0, at: Self.midMarch)  // 100 input and 10 output tokens
        let limits = BudgetLimits(workspace: WorkspaceBudget(perDayTokens: 300), calendar: Self.utc)
        _ = try store.ledger.reserveBudget(Self.ask(0, owner: me), limits: limits, now: Self.midMarch).get()
        guard
            case .failure(let refusal) = try store.ledger.reserveBudget(
                Self.ask(0, owner: me), limits: limits, now: Self.midMarch)
        else {
            Issue.record("110 tokens spent and 100 reserved left room for 100 more of 300")
            return
        }
        #expect(
            refusal.reason
                == "daily token budget reached, resumes after 00:00 (110 tokens spent and 100 reserved of 300, "
                + "and the next call may use up to 100)")
    }
}
