import Foundation

/// What `offpeak store prune` did, or would do.
public struct StorePruneOutcome: Sendable, Encodable {
    /// `retention.runs`; nil: retention is off.
    var keep: TimeInterval?
    /// Runs finished before this are pruned.
    var before: Date
    var dryRun: Bool
    var report = PruneReport()
    /// The SQLite file's size before and after, in bytes; nil on PostgreSQL.
    var sizes: (before: Int64, after: Int64)?

    init(keep: TimeInterval?, before: Date, dryRun: Bool) {
        self.keep = keep
        self.before = before
        self.dryRun = dryRun
    }

    public var text: String {
        guard let keep else {
            return "retention is off (retention: off in offpeak.yaml): nothing is pruned\n"
        }
        var out =
            "retention: finished runs are kept \(Int(keep / 86_400)) days; "
            + "those finished before \(Timestamp.text(before, in: TimeZone(identifier: "UTC") ?? .current))"
        if report.runs == 0 { return out + ": none to prune\n" }
        out += "\n\(dryRun ? "would prune" : "pruned") \(report.sentence); the ledger is kept whole\n"
        if let sizes {
            out +=
                "the SQLite file: \(ReportFormat.bytes(Int(sizes.before))) -> \(ReportFormat.bytes(Int(sizes.after)))\n"
        }
        return out
    }

    enum CodingKeys: String, CodingKey { case keepDays, before, dryRun, pruned, bytesBefore, bytesAfter }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keep.map { $0 / 86_400 }, forKey: .keepDays)
        try container.encode(before, forKey: .before)
        try container.encode(dryRun, forKey: .dryRun)
        try container.encode(report, forKey: .pruned)
        try container.encodeIfPresent(sizes?.before, forKey: .bytesBefore)
        try container.encodeIfPresent(sizes?.after, forKey: .bytesAfter)
    }
}
