import Foundation

/// One line of `status` for a workspace budget: what is spent and reserved against it in its
/// period (today, this month), in dollars or tokens.
struct BudgetLine: Sendable, Codable, Equatable {
    /// `per_day`, `per_month`, `per_day_tokens` or `per_month_tokens`, as offpeak.yaml names it.
    var budget: String
    var limit: Double
    var spent: Double
    /// Calls in flight and provider batches out, at their worst case.
    var reserved: Double

    var text: String {
        let period = budget.hasPrefix("per_day") ? "today" : "this month"
        guard budget.hasSuffix("_tokens") else {
            return "budget \(period): \(Money.dollars(spent)) of \(Money.dollars(limit)) spent, "
                + "\(Money.dollars(reserved)) reserved in flight\n"
        }
        return "token budget \(period): \(Int(spent)) of \(Int(limit)) tokens spent, "
            + "\(Int(reserved)) reserved in flight\n"
    }

    /// A line per budget set in offpeak.yaml, in a fixed order.
    static func lines(_ budget: WorkspaceBudget, store: Store, now: Date, calendar: Calendar = .current)
        throws(OffpeakError) -> [BudgetLine]
    {
        guard budget.isSet else { return [] }
        let (day, month) = BudgetLimits(workspace: budget, calendar: calendar).periods(at: now)
        let today = try store.ledger.budgetUse(in: day)
        let thisMonth = try store.ledger.budgetUse(in: month)
        var lines: [BudgetLine] = []
        func add(_ name: String, _ limit: Double?, _ use: BudgetUse, tokens: Bool) {
            guard let limit else { return }
            lines.append(
                tokens
                    ? BudgetLine(
                        budget: name, limit: limit, spent: Double(use.spentTokens),
                        reserved: Double(use.reservedTokens))
                    : BudgetLine(
                        budget: name, limit: limit, spent: use.spentDollars, reserved: use.reservedDollars))
        }
        add("per_day", budget.perDay, today, tokens: false)
        add("per_month", budget.perMonth, thisMonth, tokens: false)
        add("per_day_tokens", budget.perDayTokens.map(Double.init), today, tokens: true)
        add("per_month_tokens", budget.perMonthTokens.map(Double.init), thisMonth, tokens: true)
        return lines
    }
}
