import Foundation
import Testing

@testable import Offpeak

/// What booking one custom id writes (`BatchBooking.writes`), decided once for both engines.
struct BatchBookingTests {
    typealias F = RoleFixtures

    static func items(_ ids: [String]) -> [BatchItemRecord] {
        ids.enumerated().map { slot, id in
            BatchItemRecord(batchId: "ob1", requestId: id, customId: "ob1_0", slot: slot)
        }
    }

    @Test func answersNameTheCallsItemsAndTheRestGoAgainAfterTheFailures() {
        let requests = F.requests(3, run: "r1")
        var booking = BatchBooking.answered(
            ledger: F.ledger(run: "r1", items: 3),
            results: [F.result(requests[0]), F.result(F.request("elsewhere", run: "r1", position: 9))])
        booking.failed = [
            (requests[2].id, "no answer"), (requests[2].id, "second reason"), (requests[0].id, "x"),
        ]
        booking.againReason = "missing"
        let writes = booking.writes(items: Self.items(requests.map(\.id)))
        #expect(writes.ledger?.batchApi == true)
        #expect(writes.results.map(\.requestId) == [requests[0].id])
        #expect(writes.settled.map(\.id) == [requests[2].id, requests[1].id])
        #expect(writes.settled.map(\.reason) == ["no answer", "missing"])
        #expect(writes.settled.map(\.again) == [false, true])
    }

    @Test func aLoneItemTakesAnAnswerNamingNoRequestAndARefusalFailsEveryItem() {
        var result = F.result(F.request("a", run: "r1", position: 0))
        result.requestId = ""
        let lone = BatchBooking.answered(ledger: nil, results: [result]).writes(items: Self.items(["r1/a"]))
        #expect(lone.results.map(\.requestId) == ["r1/a"] && lone.settled.isEmpty && lone.ledger == nil)
        let refused = BatchBooking.refused("invalid").writes(items: Self.items(["r1/a", "r1/b"]))
        #expect(refused.settled.map(\.id) == ["r1/a", "r1/b"])
        #expect(refused.settled.allSatisfy { $0.reason == "invalid" && !$0.again })
        let expired = BatchBooking.again(.expired, reason: "expired").writes(items: Self.items(["r1/a"]))
        #expect(expired.settled.map(\.again) == [true] && expired.settled.map(\.reason) == ["expired"])
    }
}
