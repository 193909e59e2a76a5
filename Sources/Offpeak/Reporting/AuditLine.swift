import Foundation

/// One job and model in `offpeak status`'s batch audit section: how each batch size's audited
/// answers at the prompts' tail agreed, what a prompt may carry now, and whether the job's answers
/// hold up, are unproven or are below its target (`AuditRecord`).
struct AuditLine: Sendable, Codable, Equatable {
    var job: String
    var model: String
    /// The target agreement the job's answers are held to.
    var target: Double
    /// Each size's audits at the tail (weighted as the evidence fades, rounded), smallest first.
    var sizes: [Size]
    /// Most items a prompt carries now; nil: what the job allows.
    var itemLimit: Int?
    /// The size that failed, and when it is tried again.
    var failedSize: Int?
    var probeAt: Date?
    var lastDecision: AuditRecord.Decision?
    /// How the job's answers stand now (`AuditRecord.Standing`); nil before any evidence.
    var answers: Answers?

    struct Size: Sendable, Codable, Equatable {
        var size: Int
        var tailAudited: Int
        var tailAgreed: Int
        var holds: Bool
    }

    struct Answers: Sendable, Codable, Equatable {
        /// `holds`, `unproven` or `below_target`.
        var standing: String
        var size: Int
        /// For an unproven size: agreeing tail audits in a row that would show it holds up.
        var agreementsToProve: Int?
    }

    init(_ record: AuditRecord, now: Date) {
        job = record.job
        model = record.model
        target = record.target ?? JobSpec.Audit.defaultAgree
        sizes = record.sizes.map { evidence in
            let tail = evidence.faded(to: now).tail
            return Size(
                size: evidence.size, tailAudited: Int(tail.audited.rounded()),
                tailAgreed: Int(tail.agreed.rounded()), holds: record.holds(size: evidence.size, at: now))
        }
        itemLimit = record.itemLimit(at: now)
        failedSize = record.failedSize
        probeAt = record.failedSize == nil ? nil : record.probeAt
        lastDecision = record.decisions.last
        answers = record.standing(at: now).map { standing in
            Answers(
                standing: standing.name, size: standing.size, agreementsToProve: standing.agreementsToProve)
        }
    }

    /// `4: 17/17, 8: 2/6`.
    var agreedCell: String {
        sizes.isEmpty
            ? "-" : sizes.map { "\($0.size): \($0.tailAgreed)/\($0.tailAudited)" }.joined(separator: ", ")
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

    /// `hold up at 8`, `unproven at 8 (9 more audits)`, `below the 95% target at 8`.
    var answersCell: String {
        guard let answers else { return "-" }
        switch answers.standing {
        case "holds": return "hold up at \(answers.size)"
        case "unproven":
            return
                "unproven at \(answers.size) (\(Plural.count(answers.agreementsToProve ?? 0, "more audit")))"
        default: return "below the \(AuditNews.percent(target)) target at \(answers.size)"
        }
    }

    /// What `estimate` says of it: `claude-sonnet-4-5: at most 4 items a prompt; 8 tried again
    /// after 2026-11-28 04:32`.
    var estimateSentence: String { "\(model): \(nowCell)" }

    /// The section under `status`'s runs; nothing when no job was audited.
    static func text(_ lines: [AuditLine]) -> String {
        guard !lines.isEmpty else { return "" }
        let table = TextTable(columns: ["JOB", "MODEL", "AGREED AT THE TAIL BY SIZE", "NOW", "ANSWERS"])
        for line in lines {
            table.add([line.job, line.model, line.agreedCell, line.nowCell, line.answersCell])
        }
        return "\nbatch audit (offpeak audit JOB for more):\n" + table.render()
    }
}
