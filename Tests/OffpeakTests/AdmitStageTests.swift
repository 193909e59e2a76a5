import Foundation
import Testing

@testable import Offpeak

/// The run's admit stage on its own (`AdmitStage`): the gate's decision with the calls in flight
/// counted, what the provider's limits and a refused budget reservation do, and the unpriced
/// model's warning.
struct AdmitStageTests {
    static func stage(budget: JobSpec.Budget = .init(), stop: StopSignal? = nil, windowEnd: Date? = nil)
        -> AdmitStage
    {
        AdmitStage(gate: CallGateTests.gate(budget: budget, stop: stop, windowEnd: windowEnd))
    }

    static func calls(_ count: Int) -> Spend {
        var spend = Spend()
        spend.calls = count
        return spend
    }

    static func decide(
        _ stage: AdmitStage, spent: Spend = Spend(), inFlight: Spend = Spend(), lane: CallLane = .live,
        latency: LatencyEstimate? = nil, latencyReads: inout Int
    ) throws -> CallGate.Decision {
        var reads = 0
        defer { latencyReads = reads }
        return try stage.decide(
            LoopFixtures.request(), price: LoopFixtures.haiku, spent: spent, inFlight: inFlight, lane: lane,
            cacheTTL: nil,
            callsMade: 1, now: LoopFixtures.t0, conditions: { nil },
            latency: { _ throws(OffpeakError) in
                reads += 1
                return latency
            })
    }

    @Test func callsInFlightCountAsSpentAtTheirWorst() throws {
        let stage = Self.stage(budget: .init(maxCalls: 3))
        var reads = 0
        #expect(try Self.decide(stage, spent: Self.calls(2), latencyReads: &reads) == .go)
        #expect(
            try Self.decide(stage, spent: Self.calls(2), inFlight: Self.calls(1), latencyReads: &reads)
                == .stop(
                    RunStop(
                        state: .interrupted, reason: "stopped by budget max_calls: 3 of 3 calls made",
                        status: .temporaryFailure), budget: .maxCalls))
    }

    /// A model that takes a second a token.
    static let slow = LatencyEstimate(msPerCall: 0, msPerWeightedToken: 1000, outputTokens: 20, samples: 5)

    @Test func aProviderBatchHasNoWindowToFit() throws {
        let stage = Self.stage(windowEnd: LoopFixtures.t0 + 1)
        var reads = 0
        #expect(try Self.decide(stage, lane: .batch, latency: Self.slow, latencyReads: &reads) == .go)
        #expect(reads == 0, "a batch's creation is one short exchange: no speed is read")
        let request = LoopFixtures.request()
        let needs = Self.slow.expectedSeconds(
            input: TokenEstimator.inputTokens(request), maxOutput: request.maxTokens)
        #expect(
            try Self.decide(stage, latency: Self.slow, latencyReads: &reads)
                == .stop(
                    RunStop(
                        state: .interrupted,
                        reason:
                            "window ends in 1.0 s; the next call needs about \(String(format: "%.1f", needs)) s",
                        status: .temporaryFailure)))
        #expect(reads == 1)
    }

    @Test func aLimitHoldingTheCallPastTheWindowStopsThePass() {
        let end = LoopFixtures.t0 + 60
        let stage = Self.stage(windowEnd: end)
        #expect(
            stage.limitStop(until: end - 1, reason: .tokensPerMinute) == nil, "it waits: the window has room")
        #expect(
            stage.limitStop(until: end + 1, reason: .tokensPerMinute)
                == RunStop(
                    state: .interrupted,
                    reason: "the provider's limit (tokens per minute) holds the next call until "
                        + "\(Timestamp.text(end + 1)), after the window",
                    status: .temporaryFailure))
        #expect(Self.stage().limitStop(until: end + 3600, reason: .retryAfter) == nil, "no window: it waits")
    }

    @Test func aRefusedReservationWaitsOnlyForOtherCallsInFlight() {
        let daily = BudgetRefusal(
            period: .day, jobBudget: false, reason: "daily budget reached, resumes after 00:00 (UTC)",
            waitsForCallsInFlight: false)
        var held = daily
        held.waitsForCallsInFlight = true
        let now = LoopFixtures.t0
        #expect(
            Self.stage().refusalStop(daily, now: now)
                == RunStop(
                    state: .waiting, reason: "daily budget reached, resumes after 00:00 (UTC)",
                    status: .temporaryFailure, deferred: [.budget]))
        #expect(Self.stage().refusalStop(held, now: now) == nil, "other processes' calls give some back")
        #expect(
            Self.stage(windowEnd: now).refusalStop(held, now: now)
                == RunStop(
                    state: .interrupted,
                    reason: "the window ended while other calls in flight held the budget: "
                        + "daily budget reached, resumes after 00:00 (UTC)",
                    status: .temporaryFailure))
        let stop = StopSignal()
        stop.request("SIGTERM", grace: 10)
        #expect(Self.stage(stop: stop).refusalStop(held, now: now) == .signal("SIGTERM"))
    }

    @Test func aModelWithNoPriceIsWarnedAboutOnceAPass() {
        var stage = Self.stage()
        let warned = [
            stage.warnsUnpriced("mystery", price: nil), stage.warnsUnpriced("mystery", price: nil),
            stage.warnsUnpriced("other", price: nil),
            stage.warnsUnpriced("claude-haiku-4-5", price: LoopFixtures.haiku),
        ]
        #expect(warned == [true, false, true, false])
    }

    @Test func callsWaitForAMeasuredSpeedOnlyUnderAWindow() {
        #expect(Self.stage(windowEnd: LoopFixtures.t0).awaitsMeasurement(measured: false))
        #expect(!Self.stage(windowEnd: LoopFixtures.t0).awaitsMeasurement(measured: true))
        #expect(!Self.stage().awaitsMeasurement(measured: false))
    }
}
