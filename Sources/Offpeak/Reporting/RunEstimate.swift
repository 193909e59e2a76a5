import Foundation

/// What `offpeak estimate JOB` found: the work a run of the job would do now, planned as the run
/// plans it, and what it would cost through each lane, against the naive way. Nothing was sent and
/// nothing written to find it.
public struct RunEstimate: Encodable, Sendable {
    /// One way of sending the work: calls, tokens by kind, dollars.
    public struct Lane: Encodable, Sendable, Equatable {
        public var calls: Int
        /// Calls that carry several items in one batched prompt.
        public var batchedCalls: Int
        /// Items and long-document steps the calls carry.
        public var requests: Int
        public var inputTokens: Int
        public var cacheReadTokens: Int
        public var cacheWriteTokens: Int
        public var outputTokens: Int
        /// Web searches the calls may run at most (`search.max_uses` each), in `dollars`.
        public var searches: Int
        public var dollars: Double

        init(_ tally: LaneTally) {
            calls = tally.calls
            batchedCalls = tally.batchedCalls
            requests = tally.items
            inputTokens = tally.usage.input
            cacheReadTokens = tally.usage.cacheRead
            cacheWriteTokens = tally.usage.cacheWrite
            outputTokens = tally.usage.output
            searches = tally.usage.searches
            dollars = tally.dollars
        }
    }

    public var job: String
    public var provider: String
    public var model: String
    /// `live`, `batch` or `flex`: the lane the run would take now.
    public var lane: String
    /// Why the run goes live when the job asked for the batch lane.
    public var laneNote: String?
    /// The unfinished run the run would resume, and its items already answered.
    public var resumesRun: String?
    public var itemsDoneBefore: Int
    /// Items the run would answer: from the cache, asked, or refused unsent.
    public var items: Int
    public var itemsCached: Int
    public var itemsToAsk: Int
    /// Items longer than the model takes: failed unsent.
    public var itemsRefused: Int
    /// Items out in a provider batch already (collected, not asked again).
    public var itemsInBatch: Int
    /// Long documents and their chunks (summarized first, then combined).
    public var longDocuments: Int
    public var chunks: Int
    /// Long-document steps (chunks and reductions) the cache already answers.
    public var stepsCached: Int
    /// The answer length the output tokens are estimated with, and where it comes from.
    public var outputTokensPerItem: Int
    /// `job`, `model` (measured in the ledger) or `max_tokens` (a share of it: nothing measured yet).
    public var outputBasis: String
    public var outputNote: String
    public var live: Lane
    /// nil when the provider has no batch API.
    public var batch: Lane?
    /// The live lane's calls with flex processing, at its prices; nil when the model has none
    /// (and left out of the JSON).
    public var flex: Lane? = nil
    /// One request per item, whole, with no cache, no batching and no prompt cache, at live prices.
    public var naive: Lane
    /// The chosen lane's dollars.
    public var dollars: Double
    /// The model has no price: every dollar figure is unknown, shown as 0.
    public var unpriced: Bool
    /// The model has a price per web search (`ModelPrice.perSearch`).
    public var searchesPriced: Bool
    /// Expected wall time of the live lane, from the model's measured speed; nil when unmeasured.
    public var wallSeconds: Double?
    public var inFlight: Int
    /// What the reader should know about what the estimate could not see.
    public var notes: [String]
    /// Where the model's prices change with the clock: each lane now and at the next cheaper
    /// prices, one of them the run's (`RunEstimate+Plans`); nil (left out of the JSON) otherwise.
    public var plans: [Plan]? = nil
    /// What the plans' marked one is, or what waiting would save (`wait_for_cheaper_prices`).
    public var planNote: String? = nil
    /// The zone the price page states its hours in: the plans' times are said in it.
    public var plansTimeZone: String? = nil

    /// One way of doing the work: a lane, started now or when cheaper prices begin.
    public struct Plan: Encodable, Sendable, Equatable {
        public var lane: String
        /// The window whose prices it is billed at (`peak`, `off-peak`).
        public var window: String
        public var starts: Date
        /// When it would be done; nil when the model's speed is not measured yet.
        public var finishes: Date?
        public var dollars: Double
        /// The plan the run would take.
        public var takes: Bool
    }
}
