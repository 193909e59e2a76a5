import Foundation

/// What a poll changes of a batch, and when a run only waits for its batches' polls: decided here,
/// from the rows, so every engine decides the same.
extension BatchRecord {
    /// What the provider said at a poll: its word for the state and its counts, its expiry (an
    /// expiry it no longer gives keeps the last one), one poll more, and, while the batch is open,
    /// when to ask next.
    mutating func notePoll(status: String, counts: RemoteBatch.Counts, expiresAt: Date?, next: Date) {
        remoteStatus = status
        self.counts = counts
        self.expiresAt = expiresAt ?? self.expiresAt
        polls += 1
        if isOpen { nextPollAt = next }
    }

    /// The earliest poll of a run whose only work is waiting for its `open` batches (those still out),
    /// none of them due by `now`; nil when there is none out, or one is due, or one was never given
    /// a provider id (`preparing`: a pass reconciles it).
    static func onlyPollAhead(open: [BatchRecord], now: Date) -> Date? {
        guard !open.isEmpty, open.allSatisfy({ $0.state != .preparing && ($0.nextPollAt ?? now) > now })
        else { return nil }
        return open.compactMap(\.nextPollAt).min()
    }
}

extension BatchItemRecord {
    /// A batch's provider requests from its items' requests listed by custom id, then slot: each
    /// custom id once, with its requests in slot order.
    static func calls(_ items: [(customID: String, request: RequestRecord)])
        -> [(customID: String, requests: [RequestRecord])]
    {
        var calls: [(customID: String, requests: [RequestRecord])] = []
        for (customID, request) in items {
            if calls.last?.customID == customID {
                calls[calls.count - 1].requests.append(request)
            } else {
                calls.append((customID, [request]))
            }
        }
        return calls
    }
}
