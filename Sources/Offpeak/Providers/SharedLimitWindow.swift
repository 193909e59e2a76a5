import Foundation

/// The grants every process holds on one provider's shared limits, and the decision on a new one:
/// both engines read the rows and ask `answer`, so they decide alike.
///
/// A grant counts in the minute window until a minute after its `sendBy` (its requests may be sent
/// any time until then), the way `MinuteWindow` counts a call from when it was sent: at most the
/// limit in any 60 seconds. Its slots count while held by an owner that is alive and not expired.
struct SharedLimitWindow: Sendable {
    /// One grant as stored.
    struct Grant: Sendable, Equatable {
        var requests: Int
        var tokens: Int
        var slots: Int
        var sendBy: Date
        var expiresAt: Date
        var owner: String
    }

    /// How soon an ask held by other processes' calls in flight asks again: their end cannot be
    /// known, and a poll costs one short transaction.
    static let inFlightPoll: TimeInterval = 0.25

    let grants: [Grant]

    /// Requests and tokens of the grants still in the window at `now`.
    func used(now: Date) -> (requests: Int, tokens: Int) {
        let cutoff = now.addingTimeInterval(-MinuteWindow.length)
        return grants.filter { $0.sendBy > cutoff }.reduce((0, 0)) { ($0.0 + $1.requests, $0.1 + $1.tokens) }
    }

    /// Calls in flight at `now`: slots of owners alive (`ProcessOwner.isAlive`) and not expired.
    func slotsHeld(now: Date, isAlive: (String) -> Bool = ProcessOwner.isAlive) -> Int {
        grants.filter { $0.slots > 0 && $0.expiresAt > now && isAlive($0.owner) }.reduce(0) { $0 + $1.slots }
    }

    /// What `ask` gets at `now`: requests and tokens up to what it asked and what is left (at least
    /// one request and its call's tokens), or when to ask again and which limit holds it.
    func answer(_ ask: LimitAsk, now: Date, isAlive: (String) -> Bool = ProcessOwner.isAlive)
        -> Result<(requests: Int, tokens: Int), Wait>
    {
        let limits = ask.limits
        if ask.slot, let most = limits.inFlight, slotsHeld(now: now, isAlive: isAlive) >= max(1, most) {
            return .failure(Wait(until: now.addingTimeInterval(Self.inFlightPoll), because: .callsInFlight))
        }
        let used = used(now: now)
        var requests = max(1, ask.slot ? 1 : ask.requests)
        var tokens = max(ask.needed, ask.tokens)
        var latest: Wait?
        func hold(_ wait: Wait) {
            if latest.map({ wait.until > $0.until }) ?? true { latest = wait }
        }
        if let limit = limits.requestsPerMinute {
            let room = limit - used.requests
            if room < 1 {
                hold(Wait(until: freed(requests: 1 - room, now: now), because: .requestsPerMinute))
            } else {
                requests = min(requests, room)
            }
        }
        if let limit = limits.tokensPerMinute {
            let needed = min(ask.needed, limit)  // a call larger than the limit waits for an empty minute
            let room = limit - used.tokens
            if room < needed {
                hold(Wait(until: freed(tokens: needed - room, now: now), because: .tokensPerMinute))
            } else {
                tokens = max(needed, min(tokens, room))
                if ask.needed > 0 { requests = min(requests, max(1, tokens / ask.needed)) }
            }
        }
        if let latest { return .failure(latest) }
        return .success((requests, tokens))
    }

    /// When the grants in the window have freed `requests` requests (or `tokens` tokens): a minute
    /// after the `sendBy` of the last grant that must leave it.
    private func freed(requests: Int = 0, tokens: Int = 0, now: Date) -> Date {
        let cutoff = now.addingTimeInterval(-MinuteWindow.length)
        var requests = requests
        var tokens = tokens
        for grant in grants.filter({ $0.sendBy > cutoff }).sorted(by: { $0.sendBy < $1.sendBy }) {
            requests -= grant.requests
            tokens -= grant.tokens
            if requests <= 0, tokens <= 0 { return grant.sendBy.addingTimeInterval(MinuteWindow.length) }
        }
        return now.addingTimeInterval(MinuteWindow.length)
    }

    /// When to ask again, and why.
    struct Wait: Error, Equatable {
        let until: Date
        let because: CallLimiter.WaitReason
    }
}
