/// Stops spending before it happens: a call is refused if, at its worst, it would push the run past
/// one of its budgets.
///
/// "At its worst" is the estimated input (`TokenEstimator`) and the full `max_tokens` of output,
/// priced at the model's rates. Real usage is usually lower, so a run may stop a call early; it never
/// stops a call late.
struct BudgetGuard: Sendable {
    enum Limit: String, Sendable, Codable {
        case maxInputTokens = "max_input_tokens"
        case maxOutputTokens = "max_output_tokens"
        case maxCalls = "max_calls"
        case maxDollars = "max_dollars"
    }

    /// Which budget would be passed, and by how much, in words.
    struct Stop: Sendable, Equatable {
        let limit: Limit
        let message: String
    }

    let budget: JobSpec.Budget

    init(budget: JobSpec.Budget) {
        self.budget = budget
    }

    /// - Parameters:
    ///   - spent: what the run has spent so far.
    ///   - inputTokens: estimated input tokens of the next call.
    ///   - maxOutputTokens: the call's `max_tokens`.
    ///   - worstDollars: the next call's price at `inputTokens` and `maxOutputTokens`, when known.
    /// - Returns: `nil` if the call fits every budget.
    func check(spent: Spend, inputTokens: Int, maxOutputTokens: Int, worstDollars: Double?) -> Stop? {
        if let limit = budget.maxCalls, spent.calls + 1 > limit {
            return Stop(limit: .maxCalls, message: "max_calls: \(spent.calls) of \(limit) calls made")
        }
        if let limit = budget.maxInputTokens, spent.totalInputTokens + inputTokens > limit {
            return Stop(
                limit: .maxInputTokens,
                message:
                    "max_input_tokens: \(spent.totalInputTokens) used, next call needs about \(inputTokens), "
                    + "limit \(limit)")
        }
        if let limit = budget.maxOutputTokens, spent.outputTokens + maxOutputTokens > limit {
            return Stop(
                limit: .maxOutputTokens,
                message:
                    "max_output_tokens: \(spent.outputTokens) used, next call may use \(maxOutputTokens), "
                    + "limit \(limit)")
        }
        if let limit = budget.maxDollars, let worst = worstDollars, spent.dollars + worst > limit {
            return Stop(
                limit: .maxDollars,
                message: "max_dollars: $\(Money.format(spent.dollars)) spent, next call may cost up to "
                    + "$\(Money.format(worst)), limit $\(Money.format(limit))")
        }
        return nil
    }
}
