import Foundation

/// What `offpeak costs` shows: spend grouped by job, model or local day, with what the naive way
/// (one request per item, no caching, no batch discount) would have cost; once the workspace has
/// used the batch lane, the split of live and batch spend and what the batch lane saved.
public struct CostReport: Sendable, Codable {
    public enum Grouping: String, Sendable, Codable, CaseIterable {
        case job, model, day, tag
    }

    var groupedBy: Grouping
    var lines: [CostLine]
    let total: Spend
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
    /// Calls to models whose prices change with the clock, by the key of the report's lines (by tag:
    /// of them all) and the window each was billed in; absent when there were none.
    var windows: [WindowShare]?
    /// What waiting for cheaper prices saved; absent when no run waited for them.
    var waiting: WaitingSavings?
    /// Of `total`, the calls made with no tag (`--by tag` only: the tags' lines leave them out, and
    /// a call with several tags is in each of their lines).
    var untagged: Spend?

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
        let (lines, total, untagged) = try Self.lines(store: store, by: grouping, calendar: calendar)
        let windowKey: WindowKey =
            switch grouping {
            case .job: .job
            case .model: .model
            case .day: .day
            // A tag's calls are other tags' too: its windows are the whole ledger's.
            case .tag: .all
            }
        let unpriced = total.unpricedCalls > 0 ? try store.ledger.unpricedModels() : []
        let lanes = try store.ledger.spendByLane().map { LaneSplit($0, prices: prices) }
        let (audited, lost) = (
            try store.audits.auditSpend(job: nil, runID: nil), try store.ledger.lostCalls()
        )
        return CostReport(
            groupedBy: grouping, lines: lines, total: total, unpricedModels: unpriced, lanes: lanes,
            searches: Searches(byModel: try store.ledger.searchesByModel(), prices: prices),
            audit: Calls(calls: audited.calls, dollars: audited.dollars),
            lost: Calls(calls: lost.calls, dollars: lost.dollars),
            windows: Self.inOrder(
                try store.ledger.windowShares(by: windowKey, calendar: calendar),
                of: lines),
            waiting: Optional(try store.ledger.waitingSavings()).flatMap { $0.calls == 0 ? nil : $0 },
            untagged: untagged)
    }

    /// The report's lines by `grouping` and the ledger's total; by tag, what the untagged calls
    /// spent too. The tags' lines do not add up to the total (a call is in each of its tags'), so
    /// it comes from the jobs' lines, or is `total` when the caller has summed them already. With
    /// `since`, by day, only the days from it on (their sum is then the total).
    static func lines(
        store: Store, by grouping: Grouping, calendar: Calendar, since: Date? = nil, total known: Spend? = nil
    ) throws(OffpeakError) -> (lines: [CostLine], total: Spend, untagged: Spend?) {
        func sum(_ lines: [CostLine]) -> Spend { lines.reduce(into: Spend()) { $0.add($1.spend) } }
        let lines: [CostLine]
        switch grouping {
        case .job: lines = try store.ledger.costs(groupedBy: .job)
        case .model: lines = try store.ledger.costs(groupedBy: .model)
        case .day: lines = try store.ledger.costsByDay(calendar: calendar, since: since)
        case .tag:
            let total: Spend
            if let known { total = known } else { total = sum(try store.ledger.costs(groupedBy: .job)) }
            return Self.tagLines(try store.ledger.costsByTag(), total: total)
        }
        return (lines, sum(lines), nil)
    }

    /// `shares` in the order of the report's lines (their windows by name); nil when there are none.
    static func inOrder(_ shares: [WindowShare], of lines: [CostLine]) -> [WindowShare]? {
        guard !shares.isEmpty else { return nil }
        let rank = Dictionary(lines.enumerated().map { ($1.key, $0) }, uniquingKeysWith: min)
        return shares.sorted { (rank[$0.key] ?? 0, $0.window) < (rank[$1.key] ?? 0, $1.window) }
    }

    /// The tags' lines, the ledger's `total`, and what its untagged calls spent.
    static func tagLines(_ tags: (lines: [CostLine], tagged: Spend), total: Spend)
        -> (lines: [CostLine], total: Spend, untagged: Spend?)
    {
        (tags.lines, total, Self.untagged(total: total, tagged: tags.tagged))
    }

    /// The ledger's total less its tagged calls (each set of tags once).
    static func untagged(total: Spend, tagged: Spend) -> Spend {
        var left = total
        left.subtract(tagged)
        return left
    }

    /// The lines as `costs` prints them: `lines`, the untagged calls' line (`--by tag`, when they
    /// spent anything), then the total.
    static func printed(_ lines: [CostLine], total: Spend, untagged: Spend?) -> [CostLine] {
        let untaggedLine =
            untagged.flatMap { $0 == Spend() ? nil : [CostLine(key: "(no tag)", spend: $0)] } ?? []
        return lines + untaggedLine + [CostLine(key: "total", spend: total)]
    }

    public var text: String {
        let table = TextTable(columns: [
            groupedBy.rawValue.uppercased(), "CALLS", "INPUT", "CACHE-READ", "OUTPUT", "COST", "NAIVE",
            "SAVED",
        ])
        for line in Self.printed(lines, total: total, untagged: untagged) {
            let spend = line.spend
            table.add([
                line.key, spend.callsCell, "\(spend.inputTokens)", "\(spend.cacheReadTokens)",
                "\(spend.outputTokens)", spend.dollarCell(spend.dollars),
                spend.dollarCell(spend.naiveDollars),
                spend.dollarCell(spend.savedDollars),
            ])
        }
        return table.render()
            + (groupedBy == .tag && !lines.isEmpty
                ? "(a call made with several tags is in each of their lines)\n" : "")
            + (windows.map { "\n" + windowText($0) } ?? "")
            + (waiting.map { "\n" + Self.waitingText($0) } ?? "")
            + (lanes.map { "\n" + $0.text } ?? "") + (searches.map { "\n" + $0.text } ?? "")
            + (audit.map { "\n" + $0.text("batch audit", " (offpeak audit JOB says what it found)") } ?? "")
            + (lost.map {
                "\n"
                    + $0.text(
                        "lost in flight", ", estimated (their process died before their answers were kept)")
            } ?? "")
            + (Spend.unpricedNote(calls: total.unpricedCalls, models: unpricedModels) ?? "")
    }
}

extension CostReport {
    /// The calls to models whose prices change with the clock, by line and price window.
    func windowText(_ shares: [WindowShare]) -> String {
        let keyed = groupedBy != .tag
        let table = TextTable(
            columns: (keyed ? [groupedBy.rawValue.uppercased()] : []) + ["WINDOW", "CALLS", "COST"])
        for share in shares {
            table.add(
                (keyed ? [share.key] : []) + [share.window, "\(share.calls)", Money.dollars(share.dollars)])
        }
        return "by price window (models whose prices change with the clock):\n" + table.render()
    }

    /// `saved by waiting for cheaper prices: $0.0420 on 40 calls (…)`.
    static func waitingText(_ saved: WaitingSavings) -> String {
        "saved by waiting for cheaper prices: \(Money.dollars(saved.dollars)) on \(Plural.count(saved.calls, "call")) "
            + "(against the prices their runs waited through)\n"
    }
}
