import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `CallGate`: whether the next call may start now.
@Suite(.ownThreads) struct CallGateTests {
    static func gate(
        budget: JobSpec.Budget = .init(), constraints: JobSpec.Constraints = .init(), force: Bool = false,
        stop: StopSignal? = nil, windowEnd: Date? = nil, firstCallAlwaysStarts: Bool = true
    ) -> CallGate {
        CallGate(
            budget: budget, constraints: constraints, force: force, needsNetwork: true, stop: stop,
            windowEnd: windowEnd, firstCallAlwaysStarts: firstCallAlwaysStarts)
    }

    static let call = CallGate.Call(
        model: "claude-haiku-4-5", price: LoopFixtures.haiku, worst: Usage(input: 1000, output: 200))

    static func decide(
        _ gate: CallGate, call: CallGate.Call = call, spent: Spend = Spend(), callsMade: Int = 1,
        conditions: MachineConditions? = nil, expected: Double? = nil, reads: Counter = Counter()
    ) throws -> CallGate.Decision {
        try gate.decide(
            call, spent: spent, callsMade: callsMade, now: LoopFixtures.t0,
            conditions: {
                reads.conditions += 1
                return conditions
            },
            expectedSeconds: { () throws(OffpeakError) -> Double? in
                reads.latency += 1
                return expected
            })
    }

    final class Counter {
        var conditions = 0
        var latency = 0
    }

    @Test func aCallThatFitsEverythingGoes() throws {
        let reads = Counter()
        let decision = try Self.decide(
            Self.gate(constraints: .init(network: .unmetered, power: .ac)),
            conditions: LoopFixtures.conditions("ac-wifi"), reads: reads)
        #expect(decision == .go)
        #expect(reads.conditions == 1 && reads.latency == 0, "no window: no latency lookup")
    }

    @Test func aBudgetStopsTheCallThatCouldPassIt() throws {
        var spent = Spend()
        spent.calls = 3
        let reads = Counter()
        let decision = try Self.decide(Self.gate(budget: .init(maxCalls: 3)), spent: spent, reads: reads)
        #expect(
            decision
                == .stop(
                    RunStop(
                        state: .interrupted, reason: "stopped by budget max_calls: 3 of 3 calls made",
                        status: .temporaryFailure), budget: .maxCalls))
        #expect(reads.conditions == 0, "conditions are not read once the budget said no")
    }

    @Test func aDollarBudgetOnAModelWithNoPriceIsTheConfiguration() throws {
        var call = Self.call
        call.price = nil
        call.model = "mystery"
        guard case .stop(let stop, _) = try Self.decide(Self.gate(budget: .init(maxDollars: 1)), call: call)
        else {
            Issue.record("the call went")
            return
        }
        #expect(stop.status == .configuration)
        #expect(stop.reason.hasPrefix("mystery has no price, so max_dollars ($1.00) could not stop it; "))
        #expect(try Self.decide(Self.gate(), call: call) == .go, "without a dollar budget it goes")
    }

    @Test func aStopRequestStopsTheNextCall() throws {
        let stop = StopSignal()
        stop.request("SIGHUP", grace: 10)
        #expect(
            try Self.decide(Self.gate(stop: stop))
                == .stop(RunStop(state: .interrupted, reason: "stopped by SIGHUP", status: .temporaryFailure))
        )
    }

    @Test func theWindowLetsTheFirstCallGoAndStopsOneThatWouldNotFit() throws {
        let end = LoopFixtures.t0 + 1
        let first = Counter()
        #expect(try Self.decide(Self.gate(windowEnd: end), callsMade: 0, expected: 3, reads: first) == .go)
        #expect(first.latency == 0, "the first call starts regardless; its duration is not looked up")
        #expect(
            try Self.decide(Self.gate(windowEnd: end), callsMade: 1, expected: 3)
                == .stop(
                    RunStop(
                        state: .interrupted, reason: "window ends in 1.0 s; the next call needs about 3.0 s",
                        status: .temporaryFailure)))
        #expect(try Self.decide(Self.gate(windowEnd: end), callsMade: 1, expected: 0.5) == .go)
        #expect(
            try Self.decide(
                Self.gate(windowEnd: end, firstCallAlwaysStarts: false), callsMade: 0, expected: 3)
                != .go, "a tick that already called holds its later jobs' first calls to the window")
    }

    @Test func conditionsThatFailMakeTheRunWaitAndForceGoesPastAllButOffline() throws {
        let heavy = JobSpec.Constraints(network: .unmetered, power: .ac)
        let battery = LoopFixtures.conditions("battery-wwan")
        #expect(
            try Self.decide(Self.gate(constraints: heavy), conditions: battery)
                == .stop(
                    RunStop(
                        state: .waiting,
                        reason: "waiting for external power; waiting for an unmetered network",
                        status: .temporaryFailure, deferred: [.externalPower, .unmeteredNetwork])))
        #expect(try Self.decide(Self.gate(constraints: heavy, force: true), conditions: battery) == .go)
        let offline = LoopFixtures.conditions("ac-offline")
        #expect(
            try Self.decide(Self.gate(force: true), conditions: offline)
                == .stop(
                    RunStop(
                        state: .waiting, reason: "offline", status: .temporaryFailure,
                        deferred: [.offline])))
    }
}
