import Foundation
import Synchronization
import Testing

@testable import Offpeak

/// Budget reservations through `LedgerStore`, on both engines: what is held and spent, refusals and
/// their reasons, releases, stale reservations, and reservations racing from several connections.
extension LedgerStoreRoleTests {
    /// 2026-03-15 12:00 UTC.
    static let midMarch = Date(timeIntervalSince1970: 1_773_576_000)

    static func ask(
        _ dollars: Double, job: String = "j", run: String = "r1", owner: String, tokens: Int = 100
    )
        -> BudgetAsk
    {
        BudgetAsk(job: job, runID: run, owner: owner, host: "test-host", dollars: dollars, tokens: tokens)
    }

    /// A store with runs `r1` (job j) and `r2` (job k), each leased to an owner for five minutes.
    static func budgetRoles(_ engine: StoreEngine, owners: [String: String]) throws -> StoreRoles {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1", job: "j"), requests: [])
        try roles.runs.insert(run: F.run("r2", job: "k"), requests: [])
        for (run, owner) in owners.sorted(by: { $0.key < $1.key }) {
            #expect(
                try roles.leases.acquireLease(runID: run, owner: owner, host: "test-host", ttl: 300) == nil)
        }
        return roles
    }

    static func refusal(_ result: Result<Int64, BudgetRefusal>) -> BudgetRefusal? {
        if case .failure(let refusal) = result { return refusal }
        return nil
    }

    @Test(arguments: StoreEngine.allCases)
    func aReservationHoldsUntilItsLedgerRowReplacesItOrItIsReleased(engine: StoreEngine) throws {
        let me = Store.processOwner
        let other = "elsewhere:1"
        let first = try Self.budgetRoles(engine, owners: ["r1": me, "r2": other])
        let second = try first.another()
        let utc = Self.calendar("UTC")
        let limits = BudgetLimits(workspace: WorkspaceBudget(perDay: 1.0), calendar: utc)
        let now = Date()
        let day = limits.periods(at: now).day
        let held = try first.ledger.reserveBudget(Self.ask(0.625, owner: me), limits: limits, now: now).get()
        let refusal = try #require(
            Self.refusal(
                try second.ledger.reserveBudget(
                    Self.ask(0.5, job: "k", run: "r2", owner: other), limits: limits, now: now)))
        #expect(refusal.period == .day && !refusal.jobBudget)
        #expect(refusal.waitsForCallsInFlight, "the first call may cost less than its worst case")
        #expect(
            refusal.reason
                == "daily budget reached, resumes after 00:00 ($0.00 spent and $0.6250 reserved of $1.00, "
                + "and the next call may cost up to $0.5000)")
        #expect(
            try second.ledger.budgetUse(in: day)
                == BudgetUse(
                    reservedDollars: 0.625, reservedTokens: 100, inFlightDollars: 0.625, inFlightTokens: 100))
        #expect(try second.ledger.budgetUse(in: day, job: "k") == BudgetUse())

        // The call comes back costing $0.25: its reservation gives way to its ledger row.
        let run = try #require(try first.runs.run(id: "r1"))
        try first.runs.commitCall(
            run: run, ledger: Self.call(run: "r1", at: now, dollars: 0.25, input: 50, output: 10),
            results: [],
            releasing: held)
        #expect(
            try first.ledger.budgetUse(in: day)
                == BudgetUse(spentDollars: 0.25, spentTokens: 70))
        let theirs = try second.ledger.reserveBudget(
            Self.ask(0.5, job: "k", run: "r2", owner: other), limits: limits, now: now
        ).get()
        let spent = try #require(
            Self.refusal(try first.ledger.reserveBudget(Self.ask(0.375, owner: me), limits: limits, now: now))
        )
        #expect(spent.waitsForCallsInFlight, "another process's call in flight may give some back")
        // Given back without a ledger row (its batch now counts): room again.
        try second.ledger.releaseReservation(theirs)
        #expect(try first.ledger.budgetUse(in: day, job: "k") == BudgetUse())
        _ = try first.ledger.reserveBudget(Self.ask(0.375, owner: me), limits: limits, now: now).get()
        // Other periods and other days hold nothing spent.
        #expect(
            try first.ledger.budgetUse(in: DateInterval(start: now + 86_400, duration: 60)).spentDollars == 0)
    }

    @Test(arguments: StoreEngine.allCases)
    func aCrashedOwnersReservationsGoWithItsLease(engine: StoreEngine) throws {
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let dead = String(Store.processOwner.split(separator: ":")[0]) + ":\(gone.processIdentifier)"
        let roles = try Self.budgetRoles(engine, owners: ["r1": dead, "r2": "elsewhere:2"])
        let limits = BudgetLimits(workspace: WorkspaceBudget(perDay: 1.0), calendar: Self.calendar("UTC"))
        let now = Date()
        let day = limits.periods(at: now).day
        _ = try roles.ledger.reserveBudget(Self.ask(0.875, owner: dead), limits: limits, now: now).get()
        _ = try roles.ledger.reserveBudget(
            Self.ask(0.0625, job: "k", run: "r2", owner: "elsewhere:2"), limits: limits, now: now
        ).get()
        // The dead process's $0.875 is dropped at the next reservation; the live lease's stays.
        _ = try roles.ledger.reserveBudget(
            Self.ask(0.875, job: "k", run: "r2", owner: "elsewhere:2"), limits: limits, now: now
        ).get()
        #expect(try roles.ledger.budgetUse(in: day).reservedDollars == 0.9375)
        // Another host's lease that expired: its reservations go too.
        try roles.leases.releaseLease(runID: "r2", owner: "elsewhere:2")
        #expect(
            try roles.leases.acquireLease(
                runID: "r2", owner: "elsewhere:2", host: "test-host", ttl: 60, now: now - 120) == nil)
        _ = try roles.ledger.reserveBudget(
            Self.ask(0.5, job: "k", run: "r2", owner: "elsewhere:3"), limits: limits, now: now
        ).get()
        #expect(
            try roles.ledger.budgetUse(in: day).reservedDollars == 0.5,
            "only the reservation just made is left")
    }

    /// A helper (`JobRunner.help`) holds a run by its claim on a round, not by the lease: its
    /// reservations live as long as the claim. Two `offpeak run` of one job and a tick, racing
    /// against a daily budget, spent $1.30 of $1.00 while the helper's calls were dropped as stale.
    @Test(arguments: StoreEngine.allCases)
    func aHelpersReservationLivesWithItsClaim(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1", job: "j"), requests: F.requests(4, run: "r1"))
        #expect(try roles.leases.acquireLease(runID: "r1", owner: "holder:1", host: "a", ttl: 300) == nil)
        let now = Date()
        let round = try roles.leases.claimRound(
            runID: "r1", owner: "helper:2", host: "b", limit: 2, ttl: 300, now: now)
        #expect(round.count == 2)
        let limits = BudgetLimits(workspace: WorkspaceBudget(perDay: 1.0), calendar: Self.calendar("UTC"))
        let day = limits.periods(at: now).day
        _ = try roles.ledger.reserveBudget(Self.ask(0.5, owner: "helper:2"), limits: limits, now: now).get()
        let refusal = try #require(
            Self.refusal(
                try roles.ledger.reserveBudget(Self.ask(0.625, owner: "holder:1"), limits: limits, now: now)))
        #expect(refusal.waitsForCallsInFlight, "the helper's call in flight holds $0.50")
        _ = try roles.ledger.reserveBudget(Self.ask(0.5, owner: "holder:1"), limits: limits, now: now).get()
        #expect(try roles.ledger.budgetUse(in: day).reservedDollars == 1.0)
        // The helper's claim given up (or expired): its reservations go with it.
        try roles.leases.releaseClaim(runID: "r1", owner: "helper:2")
        _ = try roles.ledger.reserveBudget(Self.ask(0.25, owner: "holder:1"), limits: limits, now: now).get()
        #expect(try roles.ledger.budgetUse(in: day).reservedDollars == 0.75)
    }

    @Test(arguments: StoreEngine.allCases)
    func monthsJobDaysTokensAndOpenBatchesAreCounted(engine: StoreEngine) throws {
        let me = Store.processOwner
        let roles = try Self.budgetRoles(engine, owners: ["r1": me, "r2": me])
        let utc = Self.calendar("UTC")
        try Self.book(
            roles,
            [
                Self.call(run: "r1", at: Self.midMarch - 13 * 86_400, dollars: 0.5),  // March 2nd
                Self.call(run: "r1", at: Self.midMarch - 3_600, dollars: 0.375, input: 40, output: 10),
                Self.call(run: "r1", at: Self.midMarch - 15 * 86_400, dollars: 9),  // February 28th
            ])
        let month = BudgetLimits(workspace: WorkspaceBudget(perDay: 5, perMonth: 1.0), calendar: utc)
        let monthly = try #require(
            Self.refusal(
                try roles.ledger.reserveBudget(Self.ask(0.25, owner: me), limits: month, now: Self.midMarch)))
        #expect(monthly.period == .month && !monthly.waitsForCallsInFlight)
        #expect(monthly.reason.hasPrefix("monthly budget reached, resumes on the 1st ($0.8750 spent"))
        let april = Self.midMarch + 17 * 86_400 - 12 * 3_600 + 60  // April 1st, 00:01
        _ = try roles.ledger.reserveBudget(Self.ask(0.25, owner: me), limits: month, now: april).get()

        // The job's own per_day counts its runs only; a provider batch out holds its worst case.
        let jobDay = BudgetLimits(workspace: WorkspaceBudget(), jobPerDay: 0.75, calendar: utc)
        let job = try #require(
            Self.refusal(
                try roles.ledger.reserveBudget(Self.ask(0.25, owner: me), limits: jobDay, now: Self.midMarch))
        )
        #expect(job.jobBudget && job.reason.hasPrefix("the job's daily budget reached, resumes after 00:00"))
        try Self.openBatch(roles, id: "b1", run: "r2", dollars: 0.5, tokens: (1_000, 200))
        let day = jobDay.periods(at: Self.midMarch).day
        #expect(
            try roles.ledger.budgetUse(in: day, job: "k")
                == BudgetUse(reservedDollars: 0.5, reservedTokens: 1_200))
        let batch = try #require(
            Self.refusal(
                try roles.ledger.reserveBudget(
                    Self.ask(0.375, job: "k", run: "r2", owner: me), limits: jobDay, now: Self.midMarch)))
        #expect(batch.jobBudget && !batch.waitsForCallsInFlight, "a batch out is no call in flight")
        _ = try roles.ledger.reserveBudget(
            Self.ask(0.25, job: "k", run: "r2", owner: me), limits: jobDay, now: Self.midMarch
        ).get()

        // Every token counts, cached ones too: 40 + 10 + 8 + 2 spent today.
        let tokens = BudgetLimits(workspace: WorkspaceBudget(perDayTokens: 1_500), calendar: utc)
        let use = try roles.ledger.budgetUse(in: day)
        #expect(use.spentTokens == 60 && use.spentDollars == 0.375)
        #expect(use.reservedTokens == 1_200 + 100 + 100, "the batch and two calls")
        let refused = try #require(
            Self.refusal(
                try roles.ledger.reserveBudget(
                    Self.ask(0, owner: me, tokens: 41), limits: tokens, now: Self.midMarch)))
        #expect(
            refused.reason
                == "daily token budget reached, resumes after 00:00 (60 tokens spent and 1400 reserved of 1500, "
                + "and the next call may use up to 41)")
    }

    /// Connections reserving against one limit at once never hold more than it between them: each
    /// check and insert takes turns with the others'.
    @Test(arguments: StoreEngine.allCases)
    func reservationsRacingFromSeveralConnectionsNeverPassTheLimit(engine: StoreEngine) throws {
        let first = try engine.roles()
        let connections = try [first] + (1..<4).map { _ in try first.another() }
        for index in connections.indices {
            try first.runs.insert(run: F.run("r\(index)", job: "j\(index)"), requests: [])
            #expect(
                try first.leases.acquireLease(
                    runID: "r\(index)", owner: "racer:\(index)", host: "test-host", ttl: 600) == nil)
        }
        let limits = BudgetLimits(workspace: WorkspaceBudget(perDay: 1.0), calendar: Self.calendar("UTC"))
        let now = Date()
        let granted = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for (index, roles) in connections.enumerated() {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                start.wait()
                for _ in 0..<6 {
                    do {
                        let ask = Self.ask(0.125, job: "j\(index)", run: "r\(index)", owner: "racer:\(index)")
                        if case .success = try roles.ledger.reserveBudget(ask, limits: limits, now: now) {
                            granted.add(1, ordering: .relaxed)
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        for _ in connections { start.signal() }
        group.wait()
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(granted.load(ordering: .relaxed) == 8, "$1.00 holds eight reservations of $0.125, no more")
        #expect(try first.ledger.budgetUse(in: limits.periods(at: now).day).reservedDollars == 1.0)
    }
}
