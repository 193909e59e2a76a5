import Foundation
import Logging

/// A flex call refused for capacity (`FlexProcessing.isCapacityRefusal`): the provider's want of
/// room, not the items' fault, and not billed. The transport has already tried it again a few
/// times, with backoff (`RetryPolicy`).
extension RunSession {
    /// What the refused call leaves: its items asked again after `FlexLane.refusalDelay`, no
    /// attempt counted, while the deadline leaves room for a flex call after that; else at once,
    /// and the rest of the pass live.
    mutating func flexRefused(_ call: PlannedCall, ledger: LedgerEntry, error: any Error) -> CallReceipt {
        var ledger = ledger  // a call made, no tokens: not billed
        ledger.failed = true
        var receipt = CallReceipt(ledger: ledger)
        flexRefusals += 1
        let now = Date()
        let at = now + FlexLane.refusalDelay(refusals: flexRefusals)
        if let deadline = run.deadlineAt, deadline.timeIntervalSince(at) < FlexLane.minimumLead {
            if callLane == .flex {
                callLane = .live
                let news =
                    "job \(spec.name): flex processing refused a call for capacity and the deadline "
                    + "(\(Timestamp.text(deadline))) is near; the rest goes live"
                context.logger.info("\(news)")
            }
            receipt.postponed = call.requests.map {
                ($0.id, "flex processing refused it for capacity; asked live", now)
            }
            return receipt
        }
        let why = "flex processing refused it for capacity (\(error)); asked again at \(Timestamp.text(at))"
        receipt.postponed = call.requests.map { ($0.id, why, at) }
        let news =
            "job \(spec.name): flex processing refused a call of \(Plural.count(call.requests.count, "item")) "
            + "for capacity; asked again at \(Timestamp.text(at))"
        context.logger.info("\(news)")
        return receipt
    }
}
