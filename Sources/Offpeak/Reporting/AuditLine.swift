import Foundation

/// One job and model in `offpeak status`'s batch audit section: how the audited batched answers
/// agreed by size, and what a prompt may carry now (`AuditRecord`).
struct AuditLine: Sendable, Codable, Equatable {
    var job: String
    var model: String
    /// Audited and agreeing items per batch size, since each size was last judged anew.
    var tallies: [AuditRecord.Tally]
    /// Most items a prompt carries now; nil: what the job allows.
    var itemLimit: Int?
    /// The size that failed, and when it is tried again.
    var failedSize: Int?
    var probeAt: Date?
    var lastDecision: AuditRecord.Decision?

    init(_ record: AuditRecord, now: Date) {
        job = record.job
        model = record.model
        tallies = record.tallies
        itemLimit = record.itemLimit(at: now)
        failedSize = record.failedSize
        probeAt = record.failedSize == nil ? nil : record.probeAt
        lastDecision = record.decisions.last
    }

    /// `4: 4/4, 8: 2/4`.
    var agreedCell: String {
        tallies.isEmpty
            ? "-" : tallies.map { "\($0.size): \($0.agreed)/\($0.audited)" }.joined(separator: ", ")
    }

    /// `at most 4 items a prompt; 8 tried again after 2026-11-28 04:00`.
    var nowCell: String {
        var cell =
            itemLimit.map { $0 <= 1 ? "items go alone" : "at most \($0) items a prompt" }
            ?? "as the job allows"
        if let probeAt, let failedSize {
            cell += "; \(failedSize) tried again after \(BatchLine.time(probeAt))"
        }
        return cell
    }

    /// What `estimate` says of it: `claude-sonnet-4-5: at most 4 items a prompt; 8 tried again
    /// after 2026-11-28 04:32`.
    var estimateSentence: String { "\(model): \(nowCell)" }

    /// The section under `status`'s runs; nothing when no job was audited.
    static func text(_ lines: [AuditLine]) -> String {
        guard !lines.isEmpty else { return "" }
        let table = TextTable(columns: ["JOB", "MODEL", "AGREED BY SIZE", "NOW"])
        for line in lines { table.add([line.job, line.model, line.agreedCell, line.nowCell]) }
        return "\nbatch audit (offpeak audit JOB for more):\n" + table.render()
    }
}
