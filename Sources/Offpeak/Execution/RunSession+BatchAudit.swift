import Foundation
import Logging

/// The batch audit in the batch lane: an audited item of a batched prompt is also asked alone in
/// the same provider batch, under a custom id of its own (`BatchRecord.auditCustomID`), booked
/// apart from the item's answer once the batch is collected. A size that fails there has the
/// run's answers from prompts now too large asked again (`reaskOversized`), as in the live lane.
extension RunSession {
    /// One audit request of a batch: which item, where it sat, and the request that asks it alone.
    struct BatchAudit {
        var slot: BatchAuditSlot
        var request: CompletionRequest
    }

    /// The audit requests of a batched call, one per place it audits.
    func batchAudits(of call: PlannedCall) -> [BatchAudit] {
        call.auditing.compactMap { index in
            guard index < call.requests.count else { return nil }
            let record = call.requests[index]
            do {
                return BatchAudit(
                    slot: BatchAuditSlot(
                        requestID: record.id, size: call.requests.count, position: index + 1),
                    request: try record.completionRequest())
            } catch {
                context.logger.debug(
                    "not auditing \(record.itemId): its stored request is unreadable: \(error)")
                return nil
            }
        }
    }

    /// Books a collected batch's audit requests, each once: the audit call at batch prices, the
    /// comparison with the item's batched answer (`answers`, as this collect read them), the
    /// record's change and, when they disagree, the single answer in the item's place.
    /// - Parameters:
    ///   - results: what the provider returned for each audit custom id (missing: not answered).
    /// - Returns: false when a stop signal came first (the batch stays `ended`, the next pass books
    ///   the rest).
    mutating func settleBatchAudits(
        _ batch: BatchRecord, _ audits: [(audit: BatchAuditRecord, request: RequestRecord)],
        results: [String: BatchResult.Outcome], answers: [String: String]
    ) throws(OffpeakError) -> Bool {
        let started = batch.submittedAt ?? batch.preparedAt
        for (audit, record) in audits where audit.outcome == nil {  // else booked by an earlier collect
            if let stop = options.stop, stop.isRequested { return false }
            let now = context.clock()
            let target = answers[record.id].map {
                AuditTarget(size: audit.batchSize, position: audit.position, batchedAnswer: $0)
            }
            var commit: AuditCommit
            let booked: BatchItemRecord.Outcome
            switch results[audit.customId] {
            case .succeeded(let response):
                commit = auditCommit(
                    record, target: target, model: batch.model, answer: .success(response),
                    latency: now.timeIntervalSince(started), lane: .batch, now: now, billedAt: now)
                booked = .succeeded
            case .expired: (commit, booked) = (AuditCommit(ledger: nil), .expired)
            case .canceled: (commit, booked) = (AuditCommit(ledger: nil), .canceled)
            case .errored, .invalid, nil: (commit, booked) = (AuditCommit(ledger: nil), .errored)
            }
            commit.slot = AuditCommit.Slot(batchID: batch.id, customID: audit.customId, outcome: booked)
            guard let after = try context.store.audits.commitAudit(commit) else { continue }
            self.audit.reads.keep(after, for: batch.model, at: now)
            if let decision = after.decisions.last, decision.at == now {
                context.logger.info("\(AuditNews.line(decision, model: batch.model))")
            }
        }
        return true
    }
}
