/// Spend as a person reads it in a table: a call whose model has no price cost an unknown amount,
/// not $0, and a failed call was still a call made.
extension Spend {
    /// `amount` for a cell of this spend: `unpriced` when every call went to a model with no price,
    /// `$x + unpriced` when some did.
    func dollarCell(_ amount: Double) -> String {
        if calls > 0 && unpricedCalls == calls { return "unpriced" }
        return Money.dollars(amount) + (unpricedCalls > 0 ? " + unpriced" : "")
    }

    /// `12`, or `12 (3 failed)`.
    var callsCell: String {
        failedCalls > 0 ? "\(calls) (\(failedCalls) failed)" : "\(calls)"
    }

    /// The sentence under a report whose sums leave calls out, or `nil`.
    static func unpricedNote(calls: Int, models: [String]) -> String? {
        guard calls > 0 else { return nil }
        let names = models.isEmpty ? "" : " (\(models.joined(separator: ", ")))"
        return "unpriced: \(Plural.count(calls, "call")) went to models with no price\(names); their cost "
            + "is not in these sums: add their prices (offpeak.yaml prices:, in LiteLLM's format)\n"
    }

    /// What a run cost, on one line: `cost: $0.0123 for 4 calls, 812 input and 96 output tokens
    /// (naive $0.0400, saved $0.0277)`.
    public var costLine: String {
        var line = "cost: \(dollarCell(dollars)) for \(Plural.count(calls, "call"))"
        if failedCalls > 0 { line += " (\(failedCalls) failed)" }
        line += ", \(totalInputTokens) input and \(outputTokens) output tokens"
        line += " (naive \(dollarCell(naiveDollars)), saved \(dollarCell(savedDollars)))"
        return line
    }
}
