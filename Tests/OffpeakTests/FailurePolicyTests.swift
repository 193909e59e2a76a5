import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `FailurePolicy`: what a failed call does to its items and to the run.
@Suite(.ownThreads) struct FailurePolicyTests {
    static let policy = FailurePolicy(maxAttempts: 3)
    static let ledger = LoopFixtures.line.entry(
        model: "m", items: 1, usage: Usage(), usageEstimated: false, price: nil, at: LoopFixtures.t0,
        latency: 0)

    static func receipt(
        _ error: ProviderError, call: PlannedCall = LoopFixtures.single(),
        streak: FailureStreak = FailureStreak(),
        stop: StopSignal? = nil
    ) -> (CallReceipt, FailureStreak) {
        var streak = streak
        let receipt = policy.receipt(
            for: error, call: call, ledger: ledger, streak: &streak, unanswered: 10, stop: stop,
            now: LoopFixtures.t0)
        return (receipt, streak)
    }

    @Test func aRefusedRequestIsRetriedLaterUntilItsAttemptsRunOut() {
        let error = ProviderError.http(status: 400, message: "bad")
        let (first, streak) = Self.receipt(error)
        #expect(first.later.map(\.at) == [LoopFixtures.t0 + 30])
        #expect(first.later.first?.reason.hasSuffix("(attempt 2 of 3)") == true)
        #expect(first.stop == nil && streak.calls == 1)
        let (last, _) = Self.receipt(error, call: LoopFixtures.single(LoopFixtures.record("r1", attempts: 2)))
        #expect(last.failed.map(\.reason) == ["provider answered HTTP 400: bad; gave up after 3 attempts"])
    }

    @Test func aRefusedBatchIsAskedAgainInSmallerPieces() {
        let call = LoopFixtures.batch(
            [LoopFixtures.record("r1"), LoopFixtures.record("r2")], texts: ["a", "b"])
        let (receipt, _) = Self.receipt(.http(status: 400, message: "bad"), call: call)
        #expect(receipt.retry.map(\.id) == ["r1", "r2"] && receipt.later.isEmpty && receipt.stop == nil)
    }

    @Test func aProviderDownInterruptsOrWaitsOfflineAndCountsAnAttempt() {
        let (busy, _) = Self.receipt(.http(status: 529, message: "overloaded"))
        #expect(busy.stop?.state == .interrupted && busy.stop?.status == .temporaryFailure)
        #expect(busy.retry.map(\.id) == ["r1"])
        let (offline, _) = Self.receipt(.unreachable("refused"))
        #expect(offline.stop?.state == .waiting && offline.stop?.deferred == [.offline])
        #expect(offline.retry.map(\.id) == ["r1"])
    }

    @Test func aRefusedKeyStopsTheRunResumableWithoutTouchingItems() {
        let (receipt, _) = Self.receipt(.http(status: 401, message: "invalid x-api-key"))
        #expect(receipt.stop?.state == .interrupted && receipt.stop?.status == .configuration)
        #expect(receipt.retry.isEmpty && receipt.later.isEmpty && receipt.failed.isEmpty)
        #expect(receipt.ledger?.runId == "j-1", "the call is still in the ledger")
    }

    @Test func alikeRefusalsForDifferentItemsStopTheRunWithoutChargingAnAttempt() {
        let error = ProviderError.http(status: 400, message: "Invalid model name")
        let streak = FailureStreak(calls: 2, text: error.description, items: ["a", "b"])
        let (receipt, after) = Self.receipt(error, streak: streak)
        #expect(receipt.stop?.status == .configuration)
        #expect(receipt.later.isEmpty && receipt.retry.isEmpty && receipt.failed.isEmpty)
        #expect(after.calls == 3 && after.items == ["a", "b", "r1"])
    }

    @Test func anAbortedCallAfterAStopRequestLeavesItsItemsAlone() {
        let stop = StopSignal()
        stop.request("SIGTERM", grace: 0)
        let (receipt, streak) = Self.receipt(.unreachable("cancelled"), stop: stop)
        #expect(receipt.stop == .signal("SIGTERM"))
        #expect(receipt.retry.isEmpty && receipt.failed.isEmpty && streak == FailureStreak())
    }
}
