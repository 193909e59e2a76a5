import Foundation

/// The run's call stage's lanes (DESIGN.md, lever 4): where the pass's calls go, as `LaneChoice`
/// chose, and how a flex call refused for capacity moves them.
struct CallLanes {
    /// The provider's batch API when the pass sends its calls through the batch lane; nil: they go
    /// straight to the provider, in `direct`.
    var batchAPI: (any BatchAPI)?
    /// How the pass's calls that go straight to the provider go: `live`, or `flex` (`FlexLane`),
    /// until a refusal near the deadline sends the rest live.
    private(set) var direct: CallLane
    /// Flex calls this pass saw refused for capacity.
    private(set) var flexRefusals = 0

    init(_ choice: LaneChoice) {
        batchAPI = choice.api
        direct = choice.callLane
    }

    /// What a flex call refused for capacity (`FlexProcessing.isCapacityRefusal`) leaves: the
    /// provider's want of room, not the items' fault, and not billed (the transport has already
    /// tried it again a few times, with backoff). Its items are asked again after
    /// `FlexLane.refusalDelay`, no attempt counted, while the deadline leaves room for a flex call
    /// after that; else at once, and the rest of the pass goes live.
    /// - Returns: the call's receipt, and the news for the log.
    mutating func flexRefused(
        _ call: PlannedCall, ledger: LedgerEntry, error: any Error, job: String, deadline: Date?, now: Date
    ) -> (receipt: CallReceipt, news: String?) {
        var ledger = ledger  // a call made, no tokens: not billed
        ledger.failed = true
        var receipt = CallReceipt(ledger: ledger)
        flexRefusals += 1
        let at = now + FlexLane.refusalDelay(refusals: flexRefusals)
        if let deadline, deadline.timeIntervalSince(at) < FlexLane.minimumLead {
            var news: String?
            if direct == .flex {
                direct = .live
                news =
                    "job \(job): flex processing refused a call for capacity and the deadline "
                    + "(\(Timestamp.text(deadline))) is near; the rest goes live"
            }
            receipt.postponed = call.requests.map {
                ($0.id, "flex processing refused it for capacity; asked live", now)
            }
            return (receipt, news)
        }
        let why = "flex processing refused it for capacity (\(error)); asked again at \(Timestamp.text(at))"
        receipt.postponed = call.requests.map { ($0.id, why, at) }
        let news =
            "job \(job): flex processing refused a call of \(Plural.count(call.requests.count, "item")) "
            + "for capacity; asked again at \(Timestamp.text(at))"
        return (receipt, news)
    }
}
