import Foundation
import Synchronization

/// One process's side of the shared limits (`SharedLimits`): each call the local limiter admits
/// also needs the store's grant, taken a block at a time so most calls cost no round trip.
///
/// A grant of several requests (and their tokens) is used by this process's next calls until it is
/// spent or its `sendBy` passes (a second later); what it did not use goes back with the next ask.
/// When `in_flight` is shared every call is its own grant holding one slot, given back when the call
/// ends. Changes (a slot given back, tokens an answer used beyond its estimate, retries) ride on the
/// next ask, or on `flush` when the run ends or waits.
final class SharedCallLimits: Sendable {
    /// How long a block may be used; it counts in the window a minute after that.
    static let blockLife: TimeInterval = 1
    /// A slot of an owner not heard from (killed on another host) is held this long at most.
    static let slotTTL: TimeInterval = 300

    let book: any SharedLimitBook
    let limits: SharedLimits
    let owner: String
    let host: String
    private let state = Mutex(Held())

    /// The calls admitted through this process's grants, and what they owe the store.
    private struct Held: Sendable {
        /// The block in use: its grant and what is left of it.
        var block: (grant: LimitGrant, requests: Int, tokens: Int, lastSent: Date?)?
        /// Ticket number -> the grant it came from, its estimated tokens, whether it holds a slot.
        var calls: [Int: (grant: Int64, tokens: Int, slot: Bool)] = [:]
        var changes: [LimitChange] = []

        /// Gives back what the block did not use, as a change.
        mutating func closeBlock() {
            guard let block else { return }
            self.block = nil
            guard block.requests > 0 || block.tokens > 0 || block.lastSent != nil else { return }
            changes.append(
                LimitChange(
                    grant: block.grant.id, requests: -block.requests, tokens: -block.tokens,
                    sentBy: block.lastSent))
        }
    }

    init(book: any SharedLimitBook, limits: SharedLimits, owner: String, host: String) {
        self.book = book
        self.limits = limits
        self.owner = owner
        self.host = host
    }

    /// Requests asked for at a time: a second's worth of the limit (at most 32), one while slots
    /// are shared.
    var blockRequests: Int {
        if limits.inFlight != nil { return 1 }
        return max(1, min(32, (limits.requestsPerMinute ?? 32 * 60) / 60))
    }

    /// Admits call `ticket`, needing `tokens`, from the block or a new grant; nil: it may go.
    func admit(ticket: Int, tokens: Int, now: Date) throws(OffpeakError) -> LimitAnswer? {
        let ask = state.withLock { held -> LimitAsk? in
            if limits.inFlight == nil, var block = held.block, now <= block.grant.sendBy, block.requests >= 1,
                limits.tokensPerMinute == nil || block.tokens >= tokens
            {
                block.requests -= 1
                block.tokens = max(0, block.tokens - tokens)
                block.lastSent = now
                held.block = block
                held.calls[ticket] = (block.grant.id, tokens, false)
                return nil
            }
            held.closeBlock()
            let requests = blockRequests
            return LimitAsk(
                limits: limits, owner: owner, host: host, requests: requests, tokens: tokens * requests,
                needed: tokens, slot: limits.inFlight != nil, sendBy: now.addingTimeInterval(Self.blockLife),
                slotTTL: Self.slotTTL)
        }
        guard let ask else { return nil }
        let changes = state.withLock { held in
            defer { held.changes = [] }
            return held.changes
        }
        let answer: LimitAnswer
        do { answer = try book.take(ask, settling: changes, now: now) } catch {
            state.withLock { $0.changes = changes + $0.changes }
            throw error
        }
        guard case .granted(let grant) = answer else { return answer }
        state.withLock { held in
            held.calls[ticket] = (grant.id, tokens, ask.slot)
            if !ask.slot {
                held.block = (grant, grant.requests - 1, max(0, grant.tokens - tokens), now)
            }
        }
        return nil
    }

    /// Call `ticket` ended after `attempts` HTTP attempts, having used `usedTokens` (nil: as
    /// estimated): its slot goes back, its retries and its tokens' difference are counted.
    func finished(ticket: Int, attempts: Int, usedTokens: Int?) {
        state.withLock { held in
            guard let call = held.calls.removeValue(forKey: ticket) else { return }
            let change = LimitChange(
                grant: call.grant, requests: max(0, attempts - 1),
                tokens: usedTokens.map { max(0, $0) - call.tokens } ?? 0, slots: call.slot ? -1 : 0)
            if change != LimitChange(grant: call.grant) { held.changes.append(change) }
        }
    }

    /// Call `ticket` was admitted and never sent: its request, tokens and slot go back.
    func withdraw(ticket: Int) {
        state.withLock { held in
            guard let call = held.calls.removeValue(forKey: ticket) else { return }
            if !call.slot, var block = held.block, block.grant.id == call.grant {
                block.requests += 1
                block.tokens += call.tokens
                held.block = block
                return
            }
            held.changes.append(
                LimitChange(grant: call.grant, requests: -1, tokens: -call.tokens, slots: call.slot ? -1 : 0))
        }
    }

    /// Whether changes wait to be sent.
    var owes: Bool { state.withLock { !$0.changes.isEmpty || $0.block != nil } }

    /// Sends what this process owes the store now: the block's unused part, slots given back.
    func flush(now: Date) throws(OffpeakError) {
        let changes = state.withLock { held in
            held.closeBlock()
            defer { held.changes = [] }
            return held.changes
        }
        guard !changes.isEmpty else { return }
        do { try book.settle(changes, now: now) } catch {
            state.withLock { $0.changes = changes + $0.changes }
            throw error
        }
    }
}
