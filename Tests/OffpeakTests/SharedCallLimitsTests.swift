import Foundation
import Synchronization
import Testing

@testable import Offpeak

/// A limiter whose limits are shared asks the store a block at a time: a call costs no round trip
/// while its block lasts, one each when calls in flight are shared; what it did not use, and the
/// slots of calls that ended, go back with its next ask or its flush.
struct SharedCallLimitsTests: LimiterTesting {
    let t0 = RoleFixtures.t0

    /// The store's limits, counting the asks and settles that reach it.
    final class CountingBook: SharedLimitBook {
        let store: any LimitStore
        let asks = Atomic<Int>(0)
        let settles = Atomic<Int>(0)

        init(_ store: any LimitStore) { self.store = store }

        func take(_ ask: LimitAsk, settling changes: [LimitChange], now: Date) throws(OffpeakError)
            -> LimitAnswer
        {
            asks.add(1, ordering: .sequentiallyConsistent)
            return try store.take(ask, settling: changes, now: now)
        }

        func settle(_ changes: [LimitChange], now: Date) throws(OffpeakError) {
            settles.add(1, ordering: .sequentiallyConsistent)
            try store.settle(changes, now: now)
        }
    }

    static func limiter(_ book: CountingBook, _ limits: ProviderLimits) -> CallLimiter {
        CallLimiter(limits, provider: .sim, baseURL: "http://127.0.0.1:1", sharedOn: book, host: "test-host")
    }

    @Test func requestsGoInBlocksAndTheUnusedPartComesBack() throws {
        let roles = try StoreEngine.sqlite.roles()
        let book = CountingBook(roles.limits)
        let limiter = Self.limiter(book, ProviderLimits(requestsPerMinute: 600))
        #expect(limiter.shared?.blockRequests == 10)
        for _ in 0..<25 { finish(limiter, try go(limiter, at: t0), at: t0) }
        #expect(book.asks.load(ordering: .sequentiallyConsistent) == 3, "blocks of 10, 10 and 5 of 10")
        try limiter.flush(now: t0)
        let key = try #require(limiter.shared?.limits.key)
        #expect(try roles.limits.limitGrants(key: key).map(\.requests).sorted() == [5, 10, 10])
        // Another process on the store sees the 25 and gets what is left of the 600.
        let other = Self.limiter(
            CountingBook(try roles.another().limits), ProviderLimits(requestsPerMinute: 600))
        _ = try go(other, at: t0)
        try other.flush(now: t0)
        #expect(try roles.limits.limitGrants(key: key).map(\.requests).reduce(0, +) == 26)
    }

    @Test func sharedCallsInFlightTakeASlotEachAndGiveItBack() throws {
        let roles = try StoreEngine.sqlite.roles()
        let book = CountingBook(roles.limits)
        let limiter = Self.limiter(book, ProviderLimits(inFlight: 2))
        let other = Self.limiter(CountingBook(try roles.another().limits), ProviderLimits(inFlight: 2))
        let first = try go(limiter, at: t0)
        _ = try go(other, at: t0)
        // Each process has one call in flight of its own two, but the two are all there are.
        #expect(
            try limiter.admit(estimatedTokens: 0, now: t0) == .wait(until: t0 + 0.25, because: .callsInFlight)
        )
        finish(limiter, first, at: t0)
        _ = try go(limiter, at: t0 + 1)  // the slot given back with this ask
        #expect(book.asks.load(ordering: .sequentiallyConsistent) == 3)
        #expect(limiter.inFlight == 1)
    }

    /// Limits left to their defaults are this process's own: nothing reaches the store.
    @Test func defaultLimitsAreNotShared() throws {
        let roles = try StoreEngine.sqlite.roles()
        let book = CountingBook(roles.limits)
        let limiter = Self.limiter(book, ProviderLimits())
        #expect(limiter.shared == nil)
        for _ in 0..<20 { finish(limiter, try go(limiter, at: t0), at: t0) }
        try limiter.flush(now: t0)
        #expect(book.asks.load(ordering: .sequentiallyConsistent) == 0)
        #expect(book.settles.load(ordering: .sequentiallyConsistent) == 0)
    }
}
