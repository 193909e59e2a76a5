import Foundation
import Synchronization
import Testing

@testable import Offpeak

/// The providers' limits shared through `LimitStore`, on both engines, with a second handle on the
/// same store standing for another process (`StoreRoles.another`): requests and tokens per minute
/// and calls in flight hold across both, what is given back is free again, a slot of an owner that
/// is gone or not heard from stops counting, and asks racing from several connections never take
/// more than the limit.
struct LimitStoreRoleTests {
    static let t0 = RoleFixtures.t0
    static let me = Store.processOwner

    static func ask(
        _ limits: SharedLimits, requests: Int = 1, tokens: Int = 0, needed: Int = 0, slot: Bool = false,
        owner: String = me, at now: Date = t0, ttl: TimeInterval = 300
    ) -> LimitAsk {
        LimitAsk(
            limits: limits, owner: owner, host: "test-host", requests: requests, tokens: tokens,
            needed: needed,
            slot: slot, sendBy: now.addingTimeInterval(1), slotTTL: ttl)
    }

    static func grant(_ answer: LimitAnswer, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> LimitGrant
    {
        guard case .granted(let grant) = answer else {
            Issue.record("expected a grant, got \(answer)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return grant
    }

    @Test(arguments: StoreEngine.allCases)
    func requestsPerMinuteHoldAcrossProcessesAndFreeAMinuteAfterTheirSend(engine: StoreEngine) throws {
        let one = try engine.roles()
        let other = try one.another()
        let limits = SharedLimits(key: "sim http://a", requestsPerMinute: 5)
        // A block of four, then only one is left for the other process.
        let block = try Self.grant(
            try one.limits.take(Self.ask(limits, requests: 4), settling: [], now: Self.t0))
        #expect(block.requests == 4)
        let last = try Self.grant(
            try other.limits.take(
                Self.ask(limits, requests: 4, at: Self.t0 + 2), settling: [], now: Self.t0 + 2))
        #expect(last.requests == 1)
        // Full: the next request waits until the first block has been a minute out of its send time.
        #expect(
            try one.limits.take(Self.ask(limits, at: Self.t0 + 5), settling: [], now: Self.t0 + 5)
                == .wait(until: Self.t0 + 61, because: .requestsPerMinute))
        // Another provider's limits are its own.
        let elsewhere = SharedLimits(key: "sim http://b", requestsPerMinute: 5)
        #expect(
            try Self.grant(try other.limits.take(Self.ask(elsewhere), settling: [], now: Self.t0 + 5))
                .requests == 1)
        // The first process used one of its four (sent at t0): three come back with its next ask.
        let back = LimitChange(grant: block.id, requests: -3, sentBy: Self.t0)
        let again = try Self.grant(
            try one.limits.take(
                Self.ask(limits, requests: 4, at: Self.t0 + 6), settling: [back], now: Self.t0 + 6))
        #expect(again.requests == 3)
        #expect(
            try other.limits.take(Self.ask(limits, at: Self.t0 + 7), settling: [], now: Self.t0 + 7)
                == .wait(until: Self.t0 + 60, because: .requestsPerMinute))
        // A minute after the first block's last send it has left the window.
        #expect(
            try Self.grant(
                try other.limits.take(Self.ask(limits, at: Self.t0 + 60), settling: [], now: Self.t0 + 60)
            )
            .requests == 1)
    }

    @Test(arguments: StoreEngine.allCases)
    func tokensPerMinuteCountEstimatesAndTheCorrectionsAnswersBring(engine: StoreEngine) throws {
        let one = try engine.roles()
        let other = try one.another()
        let limits = SharedLimits(key: "anthropic https://api", tokensPerMinute: 1000)
        let first = try Self.grant(
            try one.limits.take(Self.ask(limits, tokens: 700, needed: 700), settling: [], now: Self.t0))
        #expect(first.tokens == 700)
        // 300 are left: a call of 400 waits for the first to leave the window.
        #expect(
            try other.limits.take(Self.ask(limits, tokens: 400, needed: 400), settling: [], now: Self.t0 + 1)
                == .wait(until: Self.t0 + 61, because: .tokensPerMinute))
        // The first call's answer used 200 of its 700: the room is there now.
        try one.limits.settle([LimitChange(grant: first.id, tokens: -500)], now: Self.t0 + 2)
        let second = try Self.grant(
            try other.limits.take(Self.ask(limits, tokens: 4000, needed: 400), settling: [], now: Self.t0 + 2)
        )
        #expect(second.tokens == 800, "a block takes what is left, no more")
        let held = try one.limits.limitGrants(key: limits.key)
        #expect(held.map(\.tokens).sorted() == [200, 800])
    }

    @Test(arguments: StoreEngine.allCases)
    func callsInFlightHoldAcrossProcessesUntilTheirSlotsComeBack(engine: StoreEngine) throws {
        let one = try engine.roles()
        let other = try one.another()
        let limits = SharedLimits(key: "sim http://a", inFlight: 2)
        let a = try Self.grant(try one.limits.take(Self.ask(limits, slot: true), settling: [], now: Self.t0))
        _ = try Self.grant(try other.limits.take(Self.ask(limits, slot: true), settling: [], now: Self.t0))
        #expect(
            try other.limits.take(Self.ask(limits, slot: true), settling: [], now: Self.t0 + 1)
                == .wait(until: Self.t0 + 1 + SharedLimitWindow.inFlightPoll, because: .callsInFlight))
        try one.limits.settle([LimitChange(grant: a.id, slots: -1)], now: Self.t0 + 2)
        _ = try Self.grant(
            try other.limits.take(Self.ask(limits, slot: true), settling: [], now: Self.t0 + 2))
        #expect(try one.limits.limitGrants(key: limits.key).map(\.slots).reduce(0, +) == 2)
    }

    @Test(arguments: StoreEngine.allCases)
    func aSlotOfAnOwnerGoneOrNotHeardFromStopsCounting(engine: StoreEngine) throws {
        let one = try engine.roles()
        let limits = SharedLimits(key: "sim http://a", inFlight: 1)
        // A process of this host that no longer runs: its slot is free at once.
        let host = Self.me.split(separator: ":")[0]
        let dead = "\(host):\(Int32.max)"
        _ = try Self.grant(
            try one.limits.take(Self.ask(limits, slot: true, owner: dead), settling: [], now: Self.t0))
        let mine = try Self.grant(
            try one.limits.take(Self.ask(limits, slot: true), settling: [], now: Self.t0))
        try one.limits.settle([LimitChange(grant: mine.id, slots: -1)], now: Self.t0)
        // Another host's process cannot be checked: its slot holds until its time to live ends.
        _ = try Self.grant(
            try one.limits.take(
                Self.ask(limits, slot: true, owner: "far-away:42", ttl: 30), settling: [], now: Self.t0 + 1))
        #expect(
            try one.limits.take(Self.ask(limits, slot: true), settling: [], now: Self.t0 + 10)
                == .wait(until: Self.t0 + 10 + SharedLimitWindow.inFlightPoll, because: .callsInFlight))
        _ = try Self.grant(try one.limits.take(Self.ask(limits, slot: true), settling: [], now: Self.t0 + 32))
    }

    /// Eight connections asking at once for one request each under a limit of 20 get 20 between
    /// them, never more, and no slot beyond the three calls in flight allowed.
    @Test(arguments: StoreEngine.allCases)
    func asksRacingFromSeveralConnectionsNeverPassTheLimit(engine: StoreEngine) throws {
        let first = try engine.roles()
        let handles = try [first] + (1..<8).map { _ in try first.another() }
        let limits = SharedLimits(key: "sim http://race", requestsPerMinute: 20, inFlight: 3)
        let granted = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: handles.count) { index in
            // Each asks until the minute is full; a wait for a slot is asked again.
            for _ in 0..<1000 {
                do {
                    switch try handles[index].limits.take(
                        Self.ask(limits, slot: true), settling: [], now: Self.t0)
                    {
                    case .granted(let grant):
                        granted.add(1, ordering: .sequentiallyConsistent)
                        // The call ends at once, its slot given back.
                        try handles[index].limits.settle(
                            [LimitChange(grant: grant.id, slots: -1)], now: Self.t0)
                    case .wait(_, .requestsPerMinute): return
                    case .wait: continue
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                    return
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(granted.load(ordering: .sequentiallyConsistent) == 20)
        let held = try first.limits.limitGrants(key: limits.key)
        #expect(held.map(\.requests).reduce(0, +) == 20)
        #expect(held.map(\.slots).reduce(0, +) == 0)
    }
}
