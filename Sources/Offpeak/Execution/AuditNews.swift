import Foundation

/// How the batch audit's decisions and standing read: in a pass's log, in `offpeak audit`, and in
/// the run's line.
enum AuditNews {
    /// One decision, as the log and `offpeak audit` say it.
    static func line(_ decision: AuditRecord.Decision, model: String) -> String {
        let prompts = "batched prompts of \(decision.size) items to \(model)"
        let agreement = "\(decision.agreed) of \(decision.audited) audited at their tail agreed"
        let after =
            (decision.cap ?? 1) <= 1
            ? "its items go alone from now on" : "at most \(decision.cap ?? 1) items a prompt from now on"
        switch decision.kind {
        case .proven:
            return "\(prompts) hold up (\(agreement))"
        case .halved, .off:
            return "\(prompts) change answers (\(agreement)): \(after)"
        case .probe:
            return "trying \(prompts) again"
        case .doubted:
            return "\(prompts) no longer shown to hold up (\(agreement)): probed again"
        case .backedOff:
            return "\(prompts) not shown to hold up within the audit's proving share, "
                + "leaning to changed answers (\(agreement)): \(after)"
        }
    }

    /// What the run's line says of its batched answers: how many the audit replaced with their
    /// single answer, and whether the size the job's prompts carry now is unproven or below the
    /// target; nil when there is nothing to say (no answer replaced, and the size holds).
    static func runClause(_ standing: AuditRecord.Standing?, replaced: Int, target: Double) -> String? {
        var parts: [String] = []
        if replaced > 0 {
            parts.append("\(Plural.count(replaced, "batched answer")) replaced by the item's single answer")
        }
        switch standing {
        case .unproven(let size, let agreements):
            parts.append(
                "prompts of \(size) items unproven (\(Plural.count(agreements, "more agreeing audit")) "
                    + "would show they hold up; the next run goes on)")
        case .belowTarget(let size, let audited, let agreed):
            parts.append(
                "prompts of \(size) items below the \(percent(target)) target so far "
                    + "(\(audited - agreed) of \(audited) audited at their tail disagreed; "
                    + "the next run probes them)")
        case .holds, nil:
            break
        }
        return parts.isEmpty ? nil : "audit: " + parts.joined(separator: ", ")
    }

    /// `95%`, `97.5%`.
    static func percent(_ share: Double) -> String {
        let value = share * 100
        return (value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)) + "%"
    }
}
