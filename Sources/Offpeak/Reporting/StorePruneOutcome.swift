import Foundation

/// What `offpeak store prune` did, or would do.
public struct StorePruneOutcome: Sendable, Encodable {
    /// `retention.runs`; nil: retention is off.
    var keep: TimeInterval?
    /// `retention.ledger`; nil: every ledger row is kept.
    var keepLedger: TimeInterval?
    /// What the horizons are counted back from.
    var now: Date
    var dryRun: Bool
    var report = PruneReport()
    /// The SQLite file's size before and after, in bytes; nil on PostgreSQL.
    var sizes: (before: Int64, after: Int64)?

    init(keep: TimeInterval?, keepLedger: TimeInterval?, now: Date, dryRun: Bool) {
        self.keep = keep
        self.keepLedger = keepLedger
        self.now = now
        self.dryRun = dryRun
    }

    /// Runs finished before this are pruned.
    var before: Date { now - (keep ?? 0) }

    public var text: String {
        guard let keep else {
            return "retention is off (retention: off in offpeak.yaml): nothing is pruned\n"
        }
        let utc = TimeZone(identifier: "UTC") ?? .current
        var out =
            "retention: finished runs are kept \(Int(keep / 86_400)) days; "
            + "those finished before \(Timestamp.text(before, in: utc))"
        if report.runs == 0, report.ledger.runs == 0 { return out + ": none to prune\n" }
        out += "\n"
        if report.runs > 0 {
            let ledger = keepLedger == nil ? "the ledger is kept whole" : "their calls stay in the ledger"
            out += "\(dryRun ? "would prune" : "pruned") \(report.sentence); \(ledger)\n"
        }
        if let keepLedger, report.ledger.runs > 0 {
            out +=
                report.ledgerSentence(dryRun ? "would roll up" : "rolled up")
                + " (runs finished before \(Timestamp.text(now - keepLedger, in: utc)),"
                + " \(Int(keepLedger / 86_400)) days); every total is kept\n"
        }
        if let sizes {
            out +=
                "the SQLite file: \(ReportFormat.bytes(Int(sizes.before))) -> \(ReportFormat.bytes(Int(sizes.after)))\n"
        }
        return out
    }

    enum CodingKeys: String, CodingKey {
        case keepDays, keepLedgerDays, before, dryRun, pruned, bytesBefore, bytesAfter
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keep.map { $0 / 86_400 }, forKey: .keepDays)
        try container.encode(keep == nil ? nil : keepLedger.map { $0 / 86_400 }, forKey: .keepLedgerDays)
        try container.encode(before, forKey: .before)
        try container.encode(dryRun, forKey: .dryRun)
        try container.encode(report, forKey: .pruned)
        try container.encodeIfPresent(sizes?.before, forKey: .bytesBefore)
        try container.encodeIfPresent(sizes?.after, forKey: .bytesAfter)
    }
}
