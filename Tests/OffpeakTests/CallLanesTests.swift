import Foundation
import Testing

@testable import Offpeak

/// The call stage's lanes on their own (`CallLanes`): a flex call refused for capacity is asked
/// again later while the deadline leaves room, else at once and the rest of the pass goes live.
struct CallLanesTests {
    static let now = LoopFixtures.t0
    static let refused = ProviderError.http(status: 429, message: "capacity")

    static func refuse(_ lanes: inout CallLanes, deadline: Date?) -> (receipt: CallReceipt, news: String?) {
        lanes.flexRefused(
            LoopFixtures.single(), ledger: CommitStageTests.ledger(dollars: 0), error: Self.refused, job: "j",
            deadline: deadline, now: Self.now)
    }

    @Test func refusalsFarFromTheDeadlineWaitLongerEachTime() throws {
        var lanes = CallLanes(LaneChoice(lane: .flex))
        let first = Self.refuse(&lanes, deadline: nil)
        let firstAt = Self.now + 60
        #expect(first.receipt.ledger?.failed == true, "a call made, no tokens: not billed")
        #expect(first.receipt.postponed.map(\.0) == ["r1"])
        #expect(first.receipt.postponed.map(\.2) == [firstAt])
        #expect(
            first.receipt.postponed.map(\.1) == [
                "flex processing refused it for capacity (\(Self.refused)); asked again at \(Timestamp.text(firstAt))"
            ])
        #expect(
            first.news
                == "job j: flex processing refused a call of 1 item for capacity; asked again at "
                + Timestamp.text(firstAt))
        let second = Self.refuse(&lanes, deadline: Self.now + 86_400)
        #expect(second.receipt.postponed.map(\.2) == [Self.now + 120], "the wait doubles")
        #expect(lanes.direct == .flex && lanes.flexRefusals == 2)
    }

    @Test func aRefusalNearTheDeadlineSendsTheRestLiveOnce() throws {
        var lanes = CallLanes(LaneChoice(lane: .flex))
        let deadline = Self.now + FlexLane.minimumLead
        let first = Self.refuse(&lanes, deadline: deadline)
        #expect(lanes.direct == .live)
        #expect(first.receipt.postponed.map(\.2) == [Self.now], "asked again at once, live")
        #expect(first.receipt.postponed.map(\.1) == ["flex processing refused it for capacity; asked live"])
        #expect(
            first.news
                == "job j: flex processing refused a call for capacity and the deadline "
                + "(\(Timestamp.text(deadline))) is near; the rest goes live")
        #expect(Self.refuse(&lanes, deadline: deadline).news == nil, "said once")
    }

    @Test func theLanesAreTheChoicesOwn() {
        #expect(CallLanes(LaneChoice(lane: .live)).direct == .live)
        #expect(CallLanes(LaneChoice(lane: .flex)).direct == .flex)
        let batch = CallLanes(LaneChoice(lane: .batch, api: FlexLaneTests.anthropic.batches))
        #expect(batch.batchAPI != nil && batch.direct == .live)
    }
}
