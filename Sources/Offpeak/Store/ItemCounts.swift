import Foundation

/// What the steps of long items change in a run's requests, applied in one transaction.
struct StepChanges: Sendable {
    /// Step rows no longer wanted (a changed document's, or a level no longer reached).
    var delete: [String] = []
    /// New step rows, pending.
    var insert: [RequestRecord] = []
    /// Items whose steps are all answered: their request becomes the final one and is pending.
    var promote: [(id: String, payload: String, cacheKey: String)] = []
    /// Items that cannot be finished because a step failed for good.
    var fail: [(id: String, reason: String)] = []

    /// Whether the changes give the run new requests to send.
    var addsWork: Bool { !insert.isEmpty || !promote.isEmpty }
    var isEmpty: Bool { delete.isEmpty && !addsWork && fail.isEmpty }
}

/// A run's items by state, leaving out the steps of long items (`RequestSource.steps`):
/// a 300-page document is one item however many calls it takes.
struct ItemCounts: Equatable {
    /// Every request of the run, steps too.
    var requests = 0
    var total = 0
    var done = 0
    var failed = 0
    /// Items answered from the answer cache.
    var cached = 0
}
