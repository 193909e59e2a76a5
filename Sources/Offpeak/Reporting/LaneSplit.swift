import Foundation

/// `costs`' split of the ledger into lanes: live, batch (calls through a provider batch) and, once
/// the workspace made one, flex (live calls with flex processing); and what the discounted lanes
/// saved: the same usage at live prices, less what was booked.
struct LaneSplit: Sendable, Codable, Equatable {
    /// One lane's calls, the items they answered, and their spend.
    struct Lane: Sendable, Codable, Equatable {
        var items = 0
        var spend = Spend()
    }

    var live = Lane()
    var batch = Lane()
    /// The batch rows' usage at the price table's live prices (`ModelPrice.dollars(for:lane: .live)`).
    var batchAtLivePrices: Double = 0
    /// `batchAtLivePrices` less what the batch rows booked.
    var savedByBatch: Double = 0
    /// Batch models whose price has no batch prices: booked at half the live price.
    var halfPriceModels: [String] = []
    /// The flex lane; nil (and left out of the JSON) while no call went flex.
    var flex: Lane?
    /// The flex rows' usage at live prices, and that less what they booked.
    var flexAtLivePrices: Double?
    var savedByFlex: Double?

    /// The split of `rows` (`Store.spendByLane`), priced again with `prices`. Discounted rows
    /// booked with no price, or whose model the table no longer prices, are left out of the savings.
    init(_ rows: [LaneModelSpend], prices: PriceTable) {
        var halfPrice: Set<String> = []
        var flexLane = Lane()
        var flexAtLive = 0.0
        var flexSaved = 0.0
        for row in rows {
            switch row.lane {
            case .live:
                live.items += row.items
                live.spend.add(row.spend)
            case .batch:
                batch.items += row.items
                batch.spend.add(row.spend)
            case .flex:
                flexLane.items += row.items
                flexLane.spend.add(row.spend)
            }
            guard row.lane != .live, !row.unpriced, let price = prices.cost(of: row.model) else { continue }
            let usage = Usage(
                input: row.spend.inputTokens, output: row.spend.outputTokens,
                cacheRead: row.spend.cacheReadTokens,
                cacheWrite: row.spend.cacheWriteTokens)
            let atLive = price.dollars(for: usage, lane: .live)
            if row.lane == .flex {
                flexAtLive += atLive
                flexSaved += atLive - row.spend.dollars
                continue
            }
            batchAtLivePrices += atLive
            savedByBatch += atLive - row.spend.dollars
            if !price.hasBatchPrices && row.spend.calls > 0 { halfPrice.insert(row.model) }
        }
        halfPriceModels = halfPrice.sorted()
        if flexLane.spend.calls > 0 {
            flex = flexLane
            flexAtLivePrices = flexAtLive
            savedByFlex = flexSaved
        }
    }

    /// The lanes as a table, the savings, and a line per model priced at half the live price.
    var text: String {
        let table = TextTable(columns: ["LANE", "CALLS", "ITEMS", "COST"])
        // A workspace that only ever went flex has no batch lane to show.
        let showsBatch = flex == nil || batch.spend.calls > 0
        var lanes = [("live", live)]
        if showsBatch { lanes.append(("batch", batch)) }
        if let flex { lanes.append(("flex", flex)) }
        for (name, lane) in lanes {
            table.add([
                name, lane.spend.callsCell, "\(lane.items)", lane.spend.dollarCell(lane.spend.dollars),
            ])
        }
        var out = table.render()
        if showsBatch {
            out +=
                "saved by the batch lane: \(Money.dollars(savedByBatch)) "
                + "(the same usage at live prices: \(Money.dollars(batchAtLivePrices)))\n"
        }
        if let savedByFlex, let flexAtLivePrices {
            out +=
                "saved by the flex lane: \(Money.dollars(savedByFlex)) "
                + "(the same usage at live prices: \(Money.dollars(flexAtLivePrices)))\n"
        }
        for model in halfPriceModels {
            out += "batch prices for \(model): half the live price (the price table has none)\n"
        }
        return out
    }
}
