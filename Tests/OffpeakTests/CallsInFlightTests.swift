import Foundation
import Testing

@testable import Offpeak

/// The calls a pass has out, as the budgets see them: a call counts at its worst case from the
/// moment it is sent until it is handed back to be committed, so a budget is never overshot by a
/// call that came back while the pass was busy.
struct CallsInFlightTests {
    static func reply(_ text: String) -> CallReply {
        CallReply(answer: .success(LoopFixtures.response(text)), rateLimit: .none, attempts: 1)
    }

    @Test func aCallThatCameBackCountsUntilItIsHandedBack() throws {
        let calls = CallsInFlight()
        let worst = CallsInFlight.Worst(inputTokens: 1000, outputTokens: 100, dollars: 0.25)
        calls.start(
            LoopFixtures.single(), ticket: CallLimiter.CallTicket(number: 1, estimatedTokens: 1100),
            worst: worst
        ) { _ in Self.reply("done") }
        // The call answers at once; whether or not its thread has finished, it is not yet committed.
        Thread.sleep(forTimeInterval: 0.2)
        #expect(calls.count == 1)
        #expect(calls.worst.calls == 1 && calls.worst.inputTokens == 1000 && calls.worst.dollars == 0.25)

        let done = try #require(calls.next(timeout: 5))
        #expect(done.ticket.number == 1)
        #expect(calls.count == 0)
        #expect(calls.worst.calls == 0 && calls.worst.dollars == 0)
        #expect(calls.next(timeout: 0) == nil)
    }

    @Test func callsAreHandedBackInTheOrderTheyFinish() throws {
        let calls = CallsInFlight()
        let worst = CallsInFlight.Worst(inputTokens: 1, outputTokens: 1, dollars: 0)
        let release = DispatchSemaphore(value: 0)
        calls.start(
            LoopFixtures.single(), ticket: CallLimiter.CallTicket(number: 1, estimatedTokens: 2), worst: worst
        ) { _ in
            release.wait()
            return Self.reply("slow")
        }
        calls.start(
            LoopFixtures.single(), ticket: CallLimiter.CallTicket(number: 2, estimatedTokens: 2), worst: worst
        ) { _ in Self.reply("fast") }
        let first = try #require(calls.next(timeout: 5))
        #expect(first.ticket.number == 2)
        #expect(calls.worst.calls == 1, "the slow call is still out")
        release.signal()
        var rest: [Int] = []
        try calls.waitForAll { done in rest.append(done.ticket.number) }
        #expect(rest == [1])
        #expect(calls.count == 0)
    }
}
