import Foundation

/// What `offpeak costs` shows: spend grouped by job, model or local day, with what the naive way
/// (one request per item, no caching, no batch discount) would have cost.
public struct CostReport: Sendable, Codable {
    public enum Grouping: String, Sendable, Codable, CaseIterable {
        case job, model, day
    }

    public var groupedBy: Grouping
    public var lines: [CostLine]
    public var total: Spend
    /// Models with calls in the ledger and no price: their calls count at $0, unknown, not free.
    public var unpricedModels: [String]

    public static func make(store: Store, by grouping: Grouping, calendar: Calendar = .current)
        throws(OffpeakError)
        -> CostReport
    {
        let lines: [CostLine]
        switch grouping {
        case .job, .model:
            lines = try store.costs(groupedBy: grouping.rawValue)
        case .day:
            lines = byDay(try store.ledger(), calendar: calendar)
        }
        let total = lines.reduce(into: Spend()) { sum, line in sum.add(line.spend) }
        let unpriced = total.unpricedCalls > 0 ? try store.unpricedModels() : []
        return CostReport(groupedBy: grouping, lines: lines, total: total, unpricedModels: unpriced)
    }

    /// Groups ledger rows by the local calendar day they were written on, newest day first.
    static func byDay(_ entries: [LedgerEntry], calendar: Calendar) -> [CostLine] {
        var days: [String: Spend] = [:]
        for entry in entries {
            let parts = calendar.dateComponents([.year, .month, .day], from: entry.at)
            let key = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
            days[key, default: Spend()].add(entry)
        }
        return days.keys.sorted(by: >).map { CostLine(key: $0, spend: days[$0] ?? Spend()) }
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

extension Spend {
    mutating func add(_ other: Spend) {
        calls += other.calls
        inputTokens += other.inputTokens
        outputTokens += other.outputTokens
        cacheReadTokens += other.cacheReadTokens
        cacheWriteTokens += other.cacheWriteTokens
        dollars += other.dollars
        naiveDollars += other.naiveDollars
        failedCalls += other.failedCalls
        unpricedCalls += other.unpricedCalls
    }

    mutating func add(_ entry: LedgerEntry) {
        if !entry.cacheHit { calls += 1 }
        inputTokens += entry.inputTokens
        outputTokens += entry.outputTokens
        cacheReadTokens += entry.cacheReadTokens
        cacheWriteTokens += entry.cacheWriteTokens
        dollars += entry.dollars
        naiveDollars += entry.naiveDollars
        if entry.failed { failedCalls += 1 }
        if entry.unpriced && !entry.cacheHit { unpricedCalls += 1 }
    }
}
