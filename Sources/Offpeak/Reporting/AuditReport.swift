import Foundation

/// What `offpeak audit JOB` shows: how the job's batched answers compared with the same items
/// asked alone, per model by batch size (at the prompts' tail too, where a size is judged) and by
/// position, each with its interval; what the audit decided and how each size stands; the items
/// that disagreed; and what the audit cost, beside what the job cost.
public struct AuditReport: Sendable, Encodable {
    var job: String
    /// The agreement asked of batched answers at every place of a prompt (`JobSpec.auditTarget`).
    var target: Double
    var audited: Int
    var agreed: Int
    /// Batched answers the audit replaced with the item's single answer.
    var replaced: Int
    /// The audit calls, and the job's spend with them.
    var auditCalls: Int
    var auditDollars: Double
    var jobDollars: Double
    var models: [Model]
    var disagreed: [Disagreement]

    /// One model's standing: what a prompt may carry now, how each size stands, its audited items
    /// by size and by position, and what the audit decided.
    struct Model: Sendable, Encodable {
        var provider: String
        var model: String
        var cap: Int?
        /// The size that failed, tried again from `probeAt`.
        var failedSize: Int?
        var probeAt: Date?
        /// `holds`, `unproven` or `below_target`, at `size` (`AuditLine.Answers`); nil: no evidence.
        var answers: AuditLine.Answers?
        var bySize: [SizeGroup]
        var byPosition: [Group]
        var decisions: [AuditRecord.Decision]
    }

    /// Audited items of one batch size: all of them, and those at the prompts' tail.
    struct SizeGroup: Sendable, Encodable {
        var size: Int
        var all: Group
        var tail: Group
        /// How the size stands now: `holds`, `unproven`, `below_target` or `not_used` (over the cap).
        var standing: String
        /// For an unproven size: agreeing tail audits in a row that would show it holds up.
        var agreementsToProve: Int?
    }

    /// Audited items of one group, with the agreement's 95 % interval.
    struct Group: Sendable, Encodable {
        var value: Int
        var audited: Int
        var agreed: Int
        var agreement: Double
        var lower: Double
        var upper: Double

        init(value: Int, rows: [AuditRow]) {
            self.value = value
            audited = rows.count
            agreed = rows.filter(\.agreed).count
            agreement = audited == 0 ? 0 : Double(agreed) / Double(audited)
            let interval = WilsonInterval(successes: agreed, trials: audited)
            (lower, upper) = (interval.lower, interval.upper)
        }
    }

    /// An item whose batched answer differed from its single one: the item keeps the single one.
    struct Disagreement: Sendable, Encodable {
        var item: String
        var run: String
        var model: String
        var batchSize: Int
        var position: Int
        var similarity: Double
        var batched: String
        var single: String
        var at: Date
    }

    static func make(store: Store, spec: JobSpec, now: Date) throws(OffpeakError) -> AuditReport {
        let rows = try store.audits.auditRows(job: spec.name)
        let records = try store.audits.auditRecords(job: spec.name).filter {
            $0.matches(shape: spec.auditShape, target: spec.auditTarget)
        }
        let cost = try store.audits.auditSpend(job: spec.name, runID: nil)
        let job = try store.ledger.costs(groupedBy: .job).first { $0.key == spec.name }?.spend ?? Spend()
        var models = records.map { record in
            model(record, rows: rows.filter { $0.model == record.model }, now: now)
        }
        // Items audited under an earlier prompt or target of the job, or of a model with no record.
        for name in Set(rows.map(\.model)).subtracting(records.map(\.model)).sorted() {
            let mine = rows.filter { $0.model == name }
            models.append(
                Model(
                    provider: mine.first?.provider ?? "", model: name,
                    bySize: sizeGroups(mine) { _ in ("unproven", nil) },
                    byPosition: groups(mine, \.position), decisions: []))
        }
        return AuditReport(
            job: spec.name, target: spec.auditTarget, audited: rows.count,
            agreed: rows.filter(\.agreed).count, replaced: rows.filter(\.keptSingle).count,
            auditCalls: cost.calls, auditDollars: cost.dollars, jobDollars: job.dollars, models: models,
            disagreed: rows.filter { !$0.agreed }.map {
                Disagreement(
                    item: $0.itemID, run: $0.runID, model: $0.model, batchSize: $0.batchSize,
                    position: $0.position, similarity: $0.similarity, batched: $0.batchedAnswer,
                    single: $0.singleAnswer, at: $0.at)
            })
    }

    private static func model(_ record: AuditRecord, rows: [AuditRow], now: Date) -> Model {
        let limit = record.itemLimit(at: now)
        let line = AuditLine(record, now: now)
        let bySize = sizeGroups(rows) { size in
            if let limit, size > limit { return ("not_used", nil) }
            let standing = record.standing(size: size, at: now)
            return (standing.name, standing.agreementsToProve)
        }
        return Model(
            provider: record.provider, model: record.model, cap: record.cap, failedSize: record.failedSize,
            probeAt: record.failedSize == nil ? nil : record.probeAt, answers: line.answers, bySize: bySize,
            byPosition: groups(rows, \.position), decisions: record.decisions)
    }

    private static func sizeGroups(_ rows: [AuditRow], standing: (Int) -> (String, Int?)) -> [SizeGroup] {
        groups(rows, \.batchSize).map { group in
            let mine = rows.filter { $0.batchSize == group.value }
            let (state, needed) = standing(group.value)
            return SizeGroup(
                size: group.value, all: group,
                tail: Group(
                    value: group.value,
                    rows: mine.filter { AuditEvidence.isTail(position: $0.position, size: $0.batchSize) }),
                standing: state, agreementsToProve: needed)
        }
    }

    private static func groups(_ rows: [AuditRow], _ key: (AuditRow) -> Int) -> [Group] {
        Dictionary(grouping: rows, by: key).map { Group(value: $0.key, rows: $0.value) }.sorted {
            $0.value < $1.value
        }
    }
}
