import Foundation

/// What `offpeak costs` shows: spend grouped by job, model or local day, with what the naive way
/// (one request per item, no caching, no batch discount) would have cost; once the workspace has
/// used the batch lane, the split of live and batch spend and what the batch lane saved.
public struct CostReport: Sendable, Codable {
    public enum Grouping: String, Sendable, Codable, CaseIterable {
        case job, model, day
    }

    var groupedBy: Grouping
    var lines: [CostLine]
    var total: Spend
    /// Models with calls in the ledger and no price: their calls count at $0, unknown, not free.
    var unpricedModels: [String]
    /// Live and batch spend; absent when the workspace never made a provider batch (all was live).
    var lanes: LaneSplit?
    /// Web searches and what they cost (already in `total`); absent when none ran.
    var searches: Searches?
    /// The batch audit's calls and what they cost (already in `total`, with nothing on the naive
    /// side); absent when no audit call was made.
    var audit: Calls?
    /// Calls booked as lost in flight (`LostCalls`), already in `total`; absent when none was.
    var lost: Calls?

    /// The ledger's web searches (`WebSearch`), priced per search by the price table.
    struct Searches: Sendable, Codable, Equatable {
        var requests: Int
        var dollars: Double

        init?(byModel: [String: Int], prices: PriceTable) {
            guard !byModel.isEmpty else { return nil }
            requests = byModel.values.reduce(0, +)
            dollars = byModel.reduce(0) { $0 + (prices.cost(of: $1.key)?.searchDollars($1.value) ?? 0) }
        }

        /// `web searches: 12, $0.1200 of the cost above`.
        var text: String {
            "web searches: \(requests), \(Money.dollars(dollars)) of the cost above\n"
        }
    }

    /// Calls of one kind, already in `total`, and what they cost: the batch audit's (`AuditStore`:
    /// items of batched prompts asked again alone, with nothing on the naive side), and those lost in
    /// flight (`LostCalls`: their process died with them, booked at their estimated price).
    struct Calls: Sendable, Codable, Equatable {
        var calls: Int
        var dollars: Double

        /// Nil when there were none.
        init?(calls: Int, dollars: Double) {
            guard calls > 0 else { return nil }
            self.calls = calls
            self.dollars = dollars
        }

        /// `batch audit: 8 calls, $0.0120 of the cost above (…)`.
        func text(_ kind: String, _ note: String) -> String {
            "\(kind): \(Plural.count(calls, "call")), \(Money.dollars(dollars)) of the cost above\(note)\n"
        }
    }

    static func make(
        store: Store, by grouping: Grouping, prices: PriceTable = .bundled, calendar: Calendar = .current
    ) throws(OffpeakError) -> CostReport {
        let lines: [CostLine]
        switch grouping {
        case .job: lines = try store.ledger.costs(groupedBy: .job)
        case .model: lines = try store.ledger.costs(groupedBy: .model)
        case .day:
            lines = try store.ledger.costsByDay(calendar: calendar)
        }
        let total = lines.reduce(into: Spend()) { sum, line in sum.add(line.spend) }
        let unpriced = total.unpricedCalls > 0 ? try store.ledger.unpricedModels() : []
        let lanes = try store.ledger.spendByLane().map { LaneSplit($0, prices: prices) }
        let (audited, lost) = (
            try store.audits.auditSpend(job: nil, runID: nil), try store.ledger.lostCalls()
        )
        return CostReport(
            groupedBy: grouping, lines: lines, total: total, unpricedModels: unpriced, lanes: lanes,
            searches: Searches(byModel: try store.ledger.searchesByModel(), prices: prices),
            audit: Calls(calls: audited.calls, dollars: audited.dollars),
            lost: Calls(calls: lost.calls, dollars: lost.dollars))
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
        return table.render() + (lanes.map { "\n" + $0.text } ?? "") + (searches.map { "\n" + $0.text } ?? "")
            + (audit.map { "\n" + $0.text("batch audit", " (offpeak audit JOB says what it found)") } ?? "")
            + (lost.map {
                "\n"
                    + $0.text(
                        "lost in flight", ", estimated (their process died before their answers were kept)")
            } ?? "")
            + (Spend.unpricedNote(calls: total.unpricedCalls, models: unpricedModels) ?? "")
    }
}
