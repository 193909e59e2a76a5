import Foundation

/// Sums over ledger rows.
public struct Spend: Sendable, Equatable, Codable {
    public var calls: Int = 0
    var inputTokens: Int = 0
    var outputTokens: Int = 0
    var cacheReadTokens: Int = 0
    var cacheWriteTokens: Int = 0
    var dollars: Double = 0
    var naiveDollars: Double = 0
    /// Of `calls`, those that brought back no answer.
    var failedCalls: Int = 0
    /// Of `calls`, those to a model with no price: `dollars` leaves them out.
    var unpricedCalls: Int = 0

    init() {}

    /// Every input token, cached or not: what an input-token budget counts.
    var totalInputTokens: Int { inputTokens + cacheReadTokens + cacheWriteTokens }
    /// What the naive way would have cost more; negative when offpeak's way cost more (rejected
    /// batches against a weak model), and shown so.
    var savedDollars: Double { naiveDollars - dollars }

    /// Adds one ledger row, as the store's run counter adds it (`run_spend`): a cache hit is no
    /// call, and an unpriced one is not counted as unpriced.
    mutating func add(_ entry: LedgerEntry) {
        calls += entry.cacheHit ? 0 : 1
        inputTokens += entry.inputTokens
        outputTokens += entry.outputTokens
        cacheReadTokens += entry.cacheReadTokens
        cacheWriteTokens += entry.cacheWriteTokens
        dollars += entry.dollars
        naiveDollars += entry.naiveDollars
        failedCalls += entry.failed ? 1 : 0
        unpricedCalls += entry.unpriced && !entry.cacheHit ? 1 : 0
    }

    /// Takes `other`, a part of this spend, off it.
    mutating func subtract(_ other: Spend) {
        calls -= other.calls
        inputTokens -= other.inputTokens
        outputTokens -= other.outputTokens
        cacheReadTokens -= other.cacheReadTokens
        cacheWriteTokens -= other.cacheWriteTokens
        // What is left of a sum of doubles less a part of it is off by the part's rounding.
        dollars = Self.cents(dollars - other.dollars)
        naiveDollars = Self.cents(naiveDollars - other.naiveDollars)
        failedCalls -= other.failedCalls
        unpricedCalls -= other.unpricedCalls
    }

    /// `amount` with what lies below a millionth of a cent dropped.
    private static func cents(_ amount: Double) -> Double {
        (amount * 1e8).rounded() / 1e8
    }

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
}

/// One line of `offpeak costs`: spend grouped by job, model or day.
struct CostLine: Sendable, Equatable, Codable {
    /// What the ledger's rows are summed by (`costs --by day` sums by local day: `costsByDay`).
    enum Key: Sendable {
        case job, model
    }

    var key: String
    var spend: Spend
}
