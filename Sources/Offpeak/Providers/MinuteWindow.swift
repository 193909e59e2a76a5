import Foundation

/// The calls offpeak sent in the last minute, with their tokens: what a requests- or
/// tokens-per-minute limit is checked against.
///
/// A sliding minute rather than a token bucket: at most `limit` in any 60 seconds is accepted by
/// all three ways providers count (a token bucket refilled over a minute, as Anthropic's; a fixed
/// minute; a sliding one), where a full bucket's burst followed by its refill can pass a sliding
/// minute's limit twice over.
struct MinuteWindow: Sendable {
    static let length: TimeInterval = 60

    struct Sent: Sendable {
        let ticket: Int
        let at: Date
        var tokens: Int
    }

    /// Oldest first; entries before `start` are gone (dropped in bulk, so forgetting is cheap).
    private var sent: [Sent] = []
    private var start = 0
    /// Sum of `tokens` over the live entries.
    private(set) var tokens = 0

    var requests: Int { sent.count - start }

    /// Drops what was sent a minute or more before `now`.
    mutating func forget(before now: Date) {
        let cutoff = now.addingTimeInterval(-Self.length)
        while start < sent.count, sent[start].at <= cutoff {
            tokens -= sent[start].tokens
            start += 1
        }
        if start > 1024, start * 2 > sent.count {
            sent.removeFirst(start)
            start = 0
        }
    }

    mutating func record(ticket: Int, at date: Date, tokens: Int) {
        sent.append(Sent(ticket: ticket, at: date, tokens: tokens))
        self.tokens += tokens
    }

    /// When one more request fits under `limit`, or nil if it fits now.
    func requestWait(limit: Int) -> Date? {
        guard requests >= limit else { return nil }
        return sent[sent.count - limit].at.addingTimeInterval(Self.length)
    }

    /// When `needed` more tokens fit under `limit`, or nil if they fit now. A call larger than the
    /// whole limit waits for an empty minute, then goes.
    func tokenWait(limit: Int, needed: Int) -> Date? {
        let needed = min(needed, limit)
        var used = tokens
        var index = start
        while used + needed > limit, index < sent.count {
            used -= sent[index].tokens
            index += 1
        }
        guard index > start else { return nil }
        return sent[index - 1].at.addingTimeInterval(Self.length)
    }

    /// Replaces a call's estimate with what it used; nothing if it has left the window.
    mutating func correct(ticket: Int, tokens: Int) {
        guard let index = position(of: ticket) else { return }
        self.tokens += tokens - sent[index].tokens
        sent[index].tokens = tokens
    }

    /// Takes back a call that was never sent.
    mutating func remove(ticket: Int) {
        guard let index = position(of: ticket) else { return }
        tokens -= sent[index].tokens
        sent.remove(at: index)
    }

    /// Entries are appended in ticket order, so a binary search finds one.
    private func position(of ticket: Int) -> Int? {
        var low = start
        var high = sent.count
        while low < high {
            let middle = (low + high) / 2
            if sent[middle].ticket < ticket { low = middle + 1 } else { high = middle }
        }
        return low < sent.count && sent[low].ticket == ticket ? low : nil
    }
}
