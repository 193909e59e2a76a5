import Foundation

/// `costs`' split of the ledger into the live lane and the batch lane (calls through a provider
/// batch), and what the batch lane saved: the same usage at live prices, less what was booked.
struct LaneSplit: Sendable, Codable, Equatable {
    /// One lane's calls, the items they answered, and their spend.
    struct Lane: Sendable, Codable, Equatable {
        var items = 0
        var spend = Spend()
    }

    var live = Lane()
    var batch = Lane()
    /// The batch rows' usage at the price table's live prices (`ModelPrice.dollars(for:batch: false)`).
    var batchAtLivePrices: Double = 0
    /// `batchAtLivePrices` less what the batch rows booked.
    var savedByBatch: Double = 0
    /// Batch models whose price has no batch prices: booked at half the live price.
    var halfPriceModels: [String] = []

    /// The split of `rows` (`Store.spendByLane`), priced again with `prices`. Batch rows booked with
    /// no price, or whose model the table no longer prices, are left out of the saving.
    init(_ rows: [LaneModelSpend], prices: PriceTable) {
        var halfPrice: Set<String> = []
        for row in rows {
            if row.batch {
                batch.items += row.items
                batch.spend.add(row.spend)
            } else {
                live.items += row.items
                live.spend.add(row.spend)
            }
            guard row.batch, !row.unpriced, let price = prices.cost(of: row.model) else { continue }
            let usage = Usage(
                input: row.spend.inputTokens, output: row.spend.outputTokens,
                cacheRead: row.spend.cacheReadTokens,
                cacheWrite: row.spend.cacheWriteTokens)
            let atLive = price.dollars(for: usage, batch: false)
            batchAtLivePrices += atLive
            savedByBatch += atLive - row.spend.dollars
            if !price.hasBatchPrices && row.spend.calls > 0 { halfPrice.insert(row.model) }
        }
        halfPriceModels = halfPrice.sorted()
    }

    /// The lanes as a table, the saving, and a line per model priced at half the live price.
    var text: String {
        let table = TextTable(columns: ["LANE", "CALLS", "ITEMS", "COST"])
        for (name, lane) in [("live", live), ("batch", batch)] {
            table.add([
                name, lane.spend.callsCell, "\(lane.items)", lane.spend.dollarCell(lane.spend.dollars),
            ])
        }
        var out = table.render()
        out +=
            "saved by the batch lane: \(Money.dollars(savedByBatch)) "
            + "(the same usage at live prices: \(Money.dollars(batchAtLivePrices)))\n"
        for model in halfPriceModels {
            out += "batch prices for \(model): half the live price (the price table has none)\n"
        }
        return out
    }
}
