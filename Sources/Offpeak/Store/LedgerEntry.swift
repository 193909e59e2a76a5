import Foundation
import GRDB

/// What one provider call (or one cache hit) cost, and what the naive way would have cost.
struct LedgerEntry: StoredRecord, Equatable {
    static let databaseTableName = "ledger"

    var id: Int64?
    var at: Date
    var job: String
    var runId: String?
    var provider: String
    var model: String
    var tier: String
    var downgraded: Bool
    /// How many items the call answered.
    var items: Int
    /// Uncached input tokens, billed at the base rate.
    var inputTokens: Int
    var outputTokens: Int
    var cacheReadTokens: Int
    var cacheWriteTokens: Int
    var dollars: Double
    /// The same items, one request each, with no prompt cache and no batch discount.
    var naiveDollars: Double
    /// The call went through a provider batch (the batch lane, billed at batch prices), not live.
    /// The column has been in the ledger since v1 (`batch_api`); batch results are its first writer.
    var batchApi: Bool
    var cacheHit: Bool
    var usageEstimated: Bool
    var latencyMs: Int
    /// The call brought back no answer (an HTTP error, a timeout): a call made, with no tokens.
    var failed = false
    /// The model has no price in the table: `dollars` is unknown, not zero.
    var unpriced = false
    /// The host that made the call (`HostName`), as every row a run writes names it (`LedgerLine`);
    /// '' on rows written before hosts were recorded.
    var host = ""
    /// Web searches the call ran (`WebSearch`), their price already in `dollars`.
    var searchRequests = 0
    /// The call asked a batched item again alone, to check the batched answer (`AuditStore`): real
    /// spend, and no naive call to compare with, so it counts against the savings shown.
    var audit = false
    /// The call went live with flex processing (`CallLane.flex`), billed at flex prices.
    var flex = false
    /// How many calls the row stands for: 1, but on a row rolled up from a day's (`LedgerRollUp`),
    /// whose tokens, dollars, items, searches and latency are the sums of its calls'.
    var calls = 1
    /// The price window the call was billed in (`ModelPrice.window`: `peak`, `off-peak`, …); '' for
    /// a model whose prices do not change with the clock, and on rows written before windows.
    var priceWindow = ""
    /// What waiting for cheaper prices saved on the call: its usage at the dearest prices its run
    /// waited through, less `dollars` (`LedgerLine.pricesWhenWaiting`); 0 for a call of a run that
    /// did not wait.
    var waitingSaved = 0.0
    /// The tags of the work that made the call (`JobSpec.tags`), `Tags.stored`: '' for none.
    var tags = ""

    /// The lane the call went in.
    var lane: CallLane { batchApi ? .batch : flex ? .flex : .live }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}
