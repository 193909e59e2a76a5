import Foundation

/// What the batch audit should add to a run's calls, for `offpeak estimate`, as if the model's
/// batched answers hold up (an estimate cannot know they will not): while the largest size the run
/// packs is unproven, its probes' tail audits until the sequential test would prove it
/// (`AuditRecord.agreementsToProve`, and one audit of the head), within the audit's proving share
/// of the run; then samples at the audit's rate, within its `max_share` of the run, what proving
/// cost counted in (as `AuditShare` counts it).
struct AuditEstimate {
    /// Items asked alone to prove the size, and to sample it.
    var proving = 0
    var sampling = 0
    /// The size the run's prompts carry, and whether it held before the run.
    var size = 0
    var holds = false

    var total: Int { proving + sampling }

    /// - Parameters:
    ///   - batchedSizes: the items of each batched call the run plans; they are audited.
    ///   - runDollars: what the run's calls cost; `single`: what one item asked alone costs.
    ///   - record: the job's audit record for its prompt shape and target; nil: none yet.
    init(
        batchedSizes: [Int], runDollars: Double, single: Double, spec: JobSpec, record: AuditRecord?,
        now: Date
    ) {
        guard let largest = batchedSizes.max(), single > 0 else { return }
        size = largest
        holds = record?.holds(size: largest, at: now) == true
        let items = batchedSizes.reduce(0, +)
        let audit = spec.auditing
        if !holds {
            let needed =
                record?.agreementsToProve(size: largest, at: now)
                ?? SequentialTest(agree: spec.auditTarget).agreementsToProve(from: 0)
            let affordable = Int((audit.proving * runDollars / single).rounded(.down))
            proving = max(0, min(needed + 1, affordable))
        }
        let rate = audit.rate * (record?.watched == true ? 2 : 1)
        let room = audit.maxShare * runDollars - (record?.watched == true ? 0 : Double(proving) * single)
        sampling = max(0, min(Int((rate * Double(items)).rounded()), Int((room / single).rounded(.down))))
    }

    /// `offpeak estimate`'s note: `batch audit: about 18 items also asked alone to prove prompts of 8 …`.
    var note: String? {
        guard total > 0 else { return nil }
        let sampled = sampling > 0 ? " and \(sampling) sampled" : ""
        if proving > 0 {
            return "batch audit: about \(Plural.count(proving, "item")) also asked alone to prove prompts of "
                + "\(size) items\(sampled), if their answers hold up"
        }
        return
            "batch audit: about \(Plural.count(sampling, "item")) of prompts of \(size) items sampled alone"
    }
}
