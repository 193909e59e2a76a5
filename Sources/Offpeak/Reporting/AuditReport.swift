import Foundation

/// What `offpeak audit JOB` shows: how the job's batched answers compared with the same items
/// asked alone, by batch size and by position; what the audit decided; the items that disagreed;
/// and what the audit cost, beside what the job cost.
public struct AuditReport: Sendable, Encodable {
    var job: String
    var minAgreement: Double
    var audited: Int
    var agreed: Int
    /// The audit calls, and the job's spend with them.
    var auditCalls: Int
    var auditDollars: Double
    var jobDollars: Double
    var models: [Model]
    var bySize: [Group]
    var byPosition: [Group]
    var disagreed: [Disagreement]

    /// One model's standing: what a prompt may carry now, and what the audit decided.
    struct Model: Sendable, Encodable {
        var provider: String
        var model: String
        var cap: Int?
        /// The size that failed, tried again from `probeAt`.
        var failedSize: Int?
        var probeAt: Date?
        var decisions: [AuditRecord.Decision]
    }

    /// Audited items of one batch size (or one position), with the agreement's 95 % interval.
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

    static func make(store: Store, spec: JobSpec) throws(OffpeakError) -> AuditReport {
        let rows = try store.audits.auditRows(job: spec.name)
        let records = try store.audits.auditRecords(job: spec.name)
        let cost = try store.audits.auditSpend(job: spec.name, runID: nil)
        let job = try store.ledger.costs(groupedBy: .job).first { $0.key == spec.name }?.spend ?? Spend()
        func groups(_ key: (AuditRow) -> Int) -> [Group] {
            Dictionary(grouping: rows, by: key).map { Group(value: $0.key, rows: $0.value) }.sorted {
                $0.value < $1.value
            }
        }
        return AuditReport(
            job: spec.name, minAgreement: spec.batching.agreementWanted, audited: rows.count,
            agreed: rows.filter(\.agreed).count, auditCalls: cost.calls, auditDollars: cost.dollars,
            jobDollars: job.dollars,
            models: records.map {
                Model(
                    provider: $0.provider, model: $0.model, cap: $0.cap,
                    failedSize: $0.failedSize,
                    probeAt: $0.failedSize == nil ? nil : $0.probeAt, decisions: $0.decisions)
            },
            bySize: groups(\.batchSize), byPosition: groups(\.position),
            disagreed: rows.filter { !$0.agreed }.map {
                Disagreement(
                    item: $0.itemID, run: $0.runID, model: $0.model, batchSize: $0.batchSize,
                    position: $0.position, similarity: $0.similarity, batched: $0.batchedAnswer,
                    single: $0.singleAnswer, at: $0.at)
            })
    }

    public var text: String {
        guard audited > 0 || !models.isEmpty else {
            return "no audited items for \(job) yet: its batched answers are audited as it runs "
                + "(min_agreement \(Self.share(minAgreement)))\n"
        }
        let share =
            jobDollars > 0
            ? " (\(Self.percent(auditDollars / jobDollars)) of the job's \(Money.dollars(jobDollars)))" : ""
        var out =
            "\(job): \(audited) batched items also asked alone, \(agreed) agreed "
            + "(\(Self.percent(audited == 0 ? 0 : Double(agreed) / Double(audited)))); "
            + "min_agreement \(Self.share(minAgreement))\n"
            + "audit cost: \(Plural.count(auditCalls, "call")), \(Money.dollars(auditDollars))\(share)\n"
        for model in models {
            let limit =
                model.cap.map { $0 <= 1 ? "items go alone" : "at most \($0) items a prompt" }
                ?? "batch sizes as the job allows"
            let probe =
                model.failedSize.flatMap { size in
                    model.probeAt.map { ", \(size) tried again after \(Timestamp.text($0))" }
                } ?? ""
            out += "\(model.model): \(limit)\(probe)\n"
        }
        out += "\n" + Self.table(title: "BATCH SIZE", bySize)
        out += "\n" + Self.table(title: "POSITION", byPosition)
        let decisions = models.flatMap { model in model.decisions.map { (model.model, $0) } }.sorted {
            $0.1.at < $1.1.at
        }
        if !decisions.isEmpty {
            out += "\ndecisions:\n"
            for (model, decision) in decisions {
                out += "  \(Timestamp.text(decision.at))  \(AuditNews.line(decision, model: model))\n"
            }
        }
        if !disagreed.isEmpty {
            out += "\ndisagreed (the item keeps its single answer):\n"
            let table = TextTable(columns: ["ITEM", "SIZE", "POSITION", "SIMILARITY", "BATCHED", "SINGLE"])
            for item in disagreed {
                table.add([
                    item.item, "\(item.batchSize)", "\(item.position)",
                    String(format: "%.2f", item.similarity),
                    Self.clip(item.batched), Self.clip(item.single),
                ])
            }
            out += table.render()
        }
        return out
    }

    private static func table(title: String, _ groups: [Group]) -> String {
        let table = TextTable(columns: [title, "AUDITED", "AGREED", "AGREEMENT", "95% INTERVAL"])
        for group in groups {
            table.add([
                "\(group.value)", "\(group.audited)", "\(group.agreed)", percent(group.agreement),
                "\(percent(group.lower))-\(percent(group.upper))",
            ])
        }
        return table.render()
    }

    static func percent(_ share: Double) -> String { String(format: "%.1f%%", share * 100) }
    static func share(_ value: Double) -> String { String(format: "%.2f", value) }

    /// An answer cut to 40 characters, for a table cell.
    static func clip(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.count <= 40 ? line : String(line.prefix(39)) + "…"
    }
}
