import Foundation

/// A provider batch with the job of its run, as `status` and `offpeak batches` list it.
struct BatchListing: Sendable, Equatable {
    var batch: BatchRecord
    var job: String
}

/// Ledger sums of one lane (live, batch or flex) and one model: what `costs` splits and prices again.
struct LaneModelSpend: Sendable, Equatable {
    var lane: CallLane
    var model: String
    /// The rows were booked with no price known (their dollars are unknown, not zero).
    var unpriced: Bool
    var spend: Spend
    /// Items answered by the lane's calls (cache hits are in neither lane).
    var items: Int
}
