import Foundation

/// What one provider request of a batch (one custom id, one or several items) leaves.
struct BatchBooking: Sendable {
    var outcome: BatchItemRecord.Outcome
    /// The call's ledger row (marked batch here) and the answers it paid for; a result names its
    /// request, or, with no request id, is the lone item's.
    var ledger: LedgerEntry?
    var results: [ResultRecord] = []
    /// Items failed for good with their reasons.
    var failed: [(id: String, reason: String)] = []
    /// When set, every item of the call not answered fails with it (an invalid request).
    var failReason: String?
    /// Why the items left unanswered go again (back to pending, one attempt more).
    var againReason = "not answered by the provider batch"

    /// An answer, with the ledger row that paid for it and the answers it split into.
    static func answered(ledger: LedgerEntry?, results: [ResultRecord]) -> BatchBooking {
        var booking = BatchBooking(outcome: .succeeded)
        booking.ledger = ledger
        booking.results = results
        return booking
    }

    /// Refused as invalid: every item of the call fails with `reason` (already redacted).
    static func refused(_ reason: String) -> BatchBooking {
        var booking = BatchBooking(outcome: .errored)
        booking.failReason = reason
        return booking
    }

    /// Expired, canceled, errored or missing: the items go again, saying why.
    static func again(_ outcome: BatchItemRecord.Outcome, reason: String) -> BatchBooking {
        var booking = BatchBooking(outcome: outcome)
        booking.againReason = reason
        return booking
    }
}

/// The rows booking one custom id writes, decided from its items alone, so every engine writes
/// the same ones (`BatchBooking.writes(items:)`).
struct BatchWrites: Sendable {
    /// The call's ledger row, marked batch.
    var ledger: LedgerEntry?
    /// The answers, each naming an item's request (a lone item's when it named none).
    var results: [ResultRecord] = []
    /// Requests not answered, in the order they are settled, each once: one that fails for good
    /// with its reason, or (`again`) one that goes back to pending saying why. Only requests still
    /// in the batch change (an answered one is done by then).
    var settled: [(id: String, reason: String, again: Bool)] = []
}

extension BatchBooking {
    /// What booking this call over `items` (its batch items, in slot order) writes: answers naming a
    /// request not among the items are dropped (unless the call has one item: then they are its),
    /// failures come first in their order (the first reason of a request wins), then every item
    /// neither answered nor failed goes again.
    func writes(items: [BatchItemRecord]) -> BatchWrites {
        var writes = BatchWrites()
        writes.ledger = ledger
        writes.ledger?.batchApi = true
        let ids = Set(items.map(\.requestId))
        for var result in results {
            if result.requestId.isEmpty || !ids.contains(result.requestId) {
                guard items.count == 1, let only = items.first else { continue }
                result.requestId = only.requestId
            }
            writes.results.append(result)
        }
        var settled = Set(writes.results.map(\.requestId))
        var failures = failed
        if let failReason { failures += items.map { ($0.requestId, failReason) } }
        for (id, reason) in failures where settled.insert(id).inserted {
            writes.settled.append((id, reason, false))
        }
        for item in items where settled.insert(item.requestId).inserted {
            writes.settled.append((item.requestId, againReason, true))
        }
        return writes
    }
}
