import Foundation

/// The rules of merging a run's planned requests into the ones it has stored (an edited spec, a
/// resumed run), shared by both engines: they decide, the engine reads and writes.
enum RequestMerge {
    /// The stored requests the merge deletes: spec items no longer planned and not done, and every
    /// long item's unanswered step (the run plans its steps again from the spec).
    /// - Returns: those requests, and the ids of the spec items dropped (what the caller reports).
    static func removals(existing: [RequestRecord], planned: Set<String>)
        -> (deleted: [RequestRecord], dropped: [String])
    {
        var deleted: [RequestRecord] = []
        var dropped: [String] = []
        for old in existing where old.state != .done {
            let unplanned = old.source == .spec && !planned.contains(old.itemId)
            guard unplanned || old.source.isStep else { continue }
            deleted.append(old)
            if unplanned { dropped.append(old.itemId) }
        }
        return (deleted, dropped)
    }

    /// What becomes of one planned request.
    enum Change: Equatable {
        /// New: inserted as planned.
        case insert(RequestRecord)
        /// Stored, not done, its payload or position changed: rewritten in place, keeping its id,
        /// attempts and creation time.
        case update(RequestRecord)
    }

    /// The change `request` makes given the request `stored` under its item, if any; nil when the
    /// stored one stays as it is (done, or unchanged).
    static func change(_ request: RequestRecord, stored: RequestRecord?) -> Change? {
        guard let stored else { return .insert(request) }
        guard stored.state != .done, stored.payload != request.payload || stored.position != request.position
        else { return nil }
        var request = request
        request.id = stored.id
        request.attempts = stored.attempts
        request.createdAt = stored.createdAt
        return .update(request)
    }
}
