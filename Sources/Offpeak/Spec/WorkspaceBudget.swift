import Foundation

/// `budget:` in offpeak.yaml: what the whole workspace may spend per local day and per local month,
/// in dollars and in tokens, across every job, run, tick and provider batch.
///
/// A per-run budget (a job's `max_dollars`) cannot stop ten cron jobs from spending a month's
/// money in a day; these can, because every call's worst case is reserved against them in the
/// store before it is sent (`Store.reserveBudget`). Tokens are every token a call bills, input
/// (cached or not) and output together.
struct WorkspaceBudget: Sendable, Equatable {
    var perDay: Double?
    var perMonth: Double?
    var perDayTokens: Int?
    var perMonthTokens: Int?

    init(perDay: Double? = nil, perMonth: Double? = nil, perDayTokens: Int? = nil, perMonthTokens: Int? = nil)
    {
        self.perDay = perDay
        self.perMonth = perMonth
        self.perDayTokens = perDayTokens
        self.perMonthTokens = perMonthTokens
    }

    /// Whether any limit is set: without one, no call is reserved (nothing to count against).
    var isSet: Bool { perDay != nil || perMonth != nil || perDayTokens != nil || perMonthTokens != nil }
}

extension WorkspaceConfigParser {
    static let budgetFields = ["per_day", "per_month", "per_day_tokens", "per_month_tokens"]

    /// `budget: {per_day: 2.00, per_month: 30.00, per_day_tokens: 2000000, per_month_tokens: ...}`:
    /// dollars above zero, tokens whole numbers from 1.
    static func budget(_ root: YAMLMapping) throws(OffpeakError) -> WorkspaceBudget {
        guard let mapping = try root.mapping("budget", allowed: budgetFields) else {
            return WorkspaceBudget()
        }
        let dollars = 0...ValueLimits.dollars
        let tokens = 1...ValueLimits.tokens
        return WorkspaceBudget(
            perDay: try mapping.number("per_day", in: dollars, exclusiveLower: true),
            perMonth: try mapping.number("per_month", in: dollars, exclusiveLower: true),
            perDayTokens: try mapping.wholeNumber("per_day_tokens", in: tokens),
            perMonthTokens: try mapping.wholeNumber("per_month_tokens", in: tokens))
    }
}
