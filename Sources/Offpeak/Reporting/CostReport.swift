import Foundation

/// What `offpeak costs` shows: spend grouped by job, model or local day, with what the naive way
/// (one request per item, no caching, no batch discount) would have cost.
public struct CostReport: Sendable, Codable {
    public enum Grouping: String, Sendable, Codable, CaseIterable {
        case job, model, day
    }

    var groupedBy: Grouping
    var lines: [CostLine]
    var total: Spend
    /// Models with calls in the ledger and no price: their calls count at $0, unknown, not free.
    var unpricedModels: [String]

    public static func make(store: Store, by grouping: Grouping, calendar: Calendar = .current)
        throws(OffpeakError)
        -> CostReport
    {
        let lines: [CostLine]
        switch grouping {
        case .job, .model:
            lines = try store.costs(groupedBy: grouping.rawValue)
        case .day:
            lines = try store.costsByDay(calendar: calendar)
        }
        let total = lines.reduce(into: Spend()) { sum, line in sum.add(line.spend) }
        let unpriced = total.unpricedCalls > 0 ? try store.unpricedModels() : []
        return CostReport(groupedBy: grouping, lines: lines, total: total, unpricedModels: unpriced)
    }

    public var text: String {
        let table = TextTable(columns: [
            groupedBy.rawValue.uppercased(), "CALLS", "INPUT", "CACHE-READ", "OUTPUT", "COST", "NAIVE",
            "SAVED",
        ])
        for line in lines + [CostLine(key: "total", spend: total)] {
            let spend = line.spend
            table.add([
                line.key, spend.callsCell, "\(spend.inputTokens)", "\(spend.cacheReadTokens)",
                "\(spend.outputTokens)", spend.dollarCell(spend.dollars),
                spend.dollarCell(spend.naiveDollars),
                spend.dollarCell(spend.savedDollars),
            ])
        }
        return table.render() + (Spend.unpricedNote(calls: total.unpricedCalls, models: unpricedModels) ?? "")
    }
}
