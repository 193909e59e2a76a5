import Foundation

/// The budgets one call is held to beyond its run's own: the workspace's per day and per month
/// (offpeak.yaml `budget:`) and its job's `per_day`, with the calendar whose days and months they
/// count (the workspace's local time: the process's time zone, `TZ`, as cron's).
struct BudgetLimits: Sendable {
    var workspace: WorkspaceBudget
    var jobPerDay: Double?
    var calendar: Calendar

    init(workspace: WorkspaceBudget, jobPerDay: Double? = nil, calendar: Calendar = .current) {
        self.workspace = workspace
        self.jobPerDay = jobPerDay
        self.calendar = calendar
    }

    /// Whether any of them is set: without one, a call's reservation is only written down (its
    /// intent, `LostCalls`), not checked.
    var isSet: Bool { workspace.isSet || jobPerDay != nil }

    /// The local day and month holding `now`.
    func periods(at now: Date) -> (day: DateInterval, month: DateInterval) {
        let day = calendar.dateInterval(of: .day, for: now) ?? DateInterval(start: now, duration: 86_400)
        let month = calendar.dateInterval(of: .month, for: now) ?? day
        return (day, month)
    }
}

/// One call's (or one provider batch's) worst case, asked of the budgets before it is sent.
struct BudgetAsk: Sendable {
    var job: String
    var runID: String
    /// The process that sends it (`ProcessOwner`): its lease on the run keeps the reservation alive.
    var owner: String
    /// The host the owner runs on (`HostName`), recorded with the reservation.
    var host: String
    var dollars: Double
    var tokens: Int
    /// The ledger row a call leaves if its process dies with it in flight (`LostCalls`): at its
    /// expected usage, marked estimated. Nil for a provider batch's request, which is no call.
    var call: LedgerEntry? = nil
}

/// What is spent (the ledger) and held (calls in flight, provider batches out) in one period.
struct BudgetUse: Sendable, Equatable, Codable {
    var spentDollars: Double = 0
    var spentTokens: Int = 0
    var reservedDollars: Double = 0
    var reservedTokens: Int = 0
    /// Of the reserved, what other processes' calls in flight hold (not provider batches): they
    /// come back soon, so a call refused only for them waits rather than stops.
    var inFlightDollars: Double = 0
    var inFlightTokens: Int = 0
}

/// Why a budget refused a call, and when its period ends.
struct BudgetRefusal: Error, Sendable, Equatable {
    enum Period: String, Sendable { case day, month }
    var period: Period
    /// The job's own `per_day`, not the workspace's.
    var jobBudget: Bool
    /// Said in the deferred queue: "daily budget reached, resumes after 00:00 (...)".
    var reason: String
    /// The call would fit once calls in flight elsewhere give back what they did not use.
    var waitsForCallsInFlight: Bool
}

extension BudgetLimits {
    /// Why `ask` would pass a budget at `now`, or nil when every budget has room: the one decision
    /// both engines make, each under its writer lock.
    ///
    /// What is held is read before what was spent, and a period's ledger only when one of its budgets
    /// is set (a month's is a scan of its rows in the time index, on every call). A call committed
    /// between two reads moves from held to spent: an engine reading each in its own snapshot counts
    /// it twice at worst (and refuses too soon), never not at all.
    /// - Parameters:
    ///   - held: what calls in flight and open provider batches hold, of `job` only when given.
    ///   - spent: `held` with what the ledger says was spent in `period`, of `job` only when given.
    func refusal<Failure: Error>(
        _ ask: BudgetAsk, at now: Date,
        held: (_ job: String?) throws(Failure) -> BudgetUse,
        spent: (_ period: DateInterval, _ job: String?, _ held: BudgetUse) throws(Failure) -> BudgetUse
    ) throws(Failure) -> BudgetRefusal? {
        let (day, month) = periods(at: now)
        let workspaceHeld = try held(nil)
        let dayUse =
            workspace.perDay == nil && workspace.perDayTokens == nil
            ? BudgetUse() : try spent(day, nil, workspaceHeld)
        let monthUse =
            workspace.perMonth == nil && workspace.perMonthTokens == nil
            ? BudgetUse() : try spent(month, nil, workspaceHeld)
        let jobUse = jobPerDay == nil ? BudgetUse() : try spent(day, ask.job, try held(ask.job))
        return refusal(ask, day: dayUse, month: monthUse, jobDay: jobUse)
    }

    /// The first budget the ask would pass, given what each period holds already.
    func refusal(_ ask: BudgetAsk, day: BudgetUse, month: BudgetUse, jobDay: BudgetUse) -> BudgetRefusal? {
        let checks: [(Double?, Int?, BudgetUse, BudgetRefusal.Period, Bool)] = [
            (workspace.perDay, workspace.perDayTokens, day, .day, false),
            (workspace.perMonth, workspace.perMonthTokens, month, .month, false),
            (jobPerDay, nil, jobDay, .day, true),
        ]
        for (dollars, tokens, use, period, job) in checks {
            if let limit = dollars, use.spentDollars + use.reservedDollars + ask.dollars > limit {
                let numbers =
                    "\(Money.dollars(use.spentDollars)) spent and \(Money.dollars(use.reservedDollars)) reserved "
                    + "of \(Money.dollars(limit)), and the next call may cost up to \(Money.dollars(ask.dollars))"
                let fits = use.spentDollars + use.reservedDollars - use.inFlightDollars + ask.dollars <= limit
                return refusal(period, job: job, kind: "budget", numbers: numbers, waits: fits)
            }
            if let limit = tokens, use.spentTokens + use.reservedTokens + ask.tokens > limit {
                let numbers =
                    "\(use.spentTokens) tokens spent and \(use.reservedTokens) reserved of \(limit), "
                    + "and the next call may use up to \(ask.tokens)"
                let fits = use.spentTokens + use.reservedTokens - use.inFlightTokens + ask.tokens <= limit
                return refusal(period, job: job, kind: "token budget", numbers: numbers, waits: fits)
            }
        }
        return nil
    }

    private func refusal(
        _ period: BudgetRefusal.Period, job: Bool, kind: String, numbers: String, waits: Bool
    ) -> BudgetRefusal {
        let whose = job ? "the job's daily" : period == .day ? "daily" : "monthly"
        let resumes = period == .day ? "resumes after 00:00" : "resumes on the 1st"
        return BudgetRefusal(
            period: period, jobBudget: job, reason: "\(whose) \(kind) reached, \(resumes) (\(numbers))",
            waitsForCallsInFlight: waits)
    }
}

/// When a reservation is no longer held: its owner's hold on the run (its lease, or a helper's claim)
/// is gone or expired, or its owner is a process of this host that no longer runs (killed with -9).
/// Only this process can tell the last, so the rule reads the reservations with their holds and
/// asks here.
enum StaleReservation {
    static func isStale(owner: String, holdExpiresAt: Date?, now: Date) -> Bool {
        holdExpiresAt.map { $0 <= now } ?? true || !ProcessOwner.isAlive(owner)
    }
}
