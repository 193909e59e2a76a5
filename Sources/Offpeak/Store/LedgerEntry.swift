import Foundation
import GRDB

/// What one provider call (or one cache hit) cost, and what the naive way would have cost.
public struct LedgerEntry: StoredRecord, Equatable {
    public static let databaseTableName = "ledger"

    public var id: Int64?
    public var at: Date
    public var job: String
    public var runId: String?
    public var provider: String
    public var model: String
    public var tier: String
    public var downgraded: Bool
    /// How many items the call answered.
    public var items: Int
    /// Uncached input tokens, billed at the base rate.
    public var inputTokens: Int
    public var outputTokens: Int
    public var cacheReadTokens: Int
    public var cacheWriteTokens: Int
    public var dollars: Double
    /// The same items, one request each, with no prompt cache and no batch discount.
    public var naiveDollars: Double
    public var batchApi: Bool
    public var cacheHit: Bool
    public var usageEstimated: Bool
    public var latencyMs: Int
    /// The call brought back no answer (an HTTP error, a timeout): a call made, with no tokens.
    public var failed = false
    /// The model has no price in the table: `dollars` is unknown, not zero.
    public var unpriced = false

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}
