import Foundation

/// `offpeak audit JOB` as a person reads it.
extension AuditReport {
    public var text: String {
        guard audited > 0 || !models.isEmpty else {
            return "no audited items for \(job) yet: its batched answers are audited as it runs "
                + "(target \(AuditNews.percent(target)) agreement)\n"
        }
        let share =
            jobDollars > 0
            ? " (\(Self.percent(auditDollars / jobDollars)) of the job's \(Money.dollars(jobDollars)))" : ""
        let replacedText =
            replaced > 0
            ? "; \(Plural.count(replaced, "batched answer")) replaced by the item's single answer" : ""
        var out =
            "\(job): \(audited) batched items also asked alone, \(agreed) agreed "
            + "(\(Self.percent(audited == 0 ? 0 : Double(agreed) / Double(audited)))); "
            + "target \(AuditNews.percent(target)) agreement at every place of a prompt\n"
            + "audit cost: \(Plural.count(auditCalls, "call")), \(Money.dollars(auditDollars))\(share)"
            + "\(replacedText)\n"
        for model in models {
            out += "\n" + Self.heading(model) + "\n"
            out += Self.sizeTable(model.bySize)
            out += Self.table(title: "POSITION", model.byPosition)
        }
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

    /// `claude-sonnet-4-5: at most 4 items a prompt, 8 tried again after …; its answers hold up at 4`.
    private static func heading(_ model: Model) -> String {
        let limit =
            model.cap.map { $0 <= 1 ? "items go alone" : "at most \($0) items a prompt" }
            ?? "batch sizes as the job allows"
        let probe =
            model.failedSize.flatMap { size in
                model.probeAt.map { ", \(size) tried again after \(Timestamp.text($0))" }
            } ?? ""
        var answers = ""
        if let standing = model.answers {
            switch standing.standing {
            case "holds": answers = "; its answers hold up at \(standing.size)"
            case "unproven":
                answers =
                    "; its answers are unproven at \(standing.size) (\(Plural.count(standing.agreementsToProve ?? 0, "more agreeing audit")) at the tail would show they hold up)"
            default: answers = "; its answers are below target at \(standing.size) so far"
            }
        }
        return "\(model.model): \(limit)\(probe)\(answers)"
    }

    private static func sizeTable(_ groups: [SizeGroup]) -> String {
        let table = TextTable(columns: [
            "BATCH SIZE", "AUDITED", "AGREED", "AGREEMENT", "95% INTERVAL", "AT THE TAIL", "TAIL AGREEMENT",
            "95% INTERVAL", "NOW",
        ])
        for group in groups {
            let now: String
            switch group.standing {
            case "holds": now = "holds up"
            case "unproven": now = "unproven (\(group.agreementsToProve ?? 0) more)"
            case "below_target": now = "below target"
            default: now = "not used"
            }
            let tail = group.tail
            table.add([
                "\(group.size)", "\(group.all.audited)", "\(group.all.agreed)", percent(group.all.agreement),
                "\(percent(group.all.lower))-\(percent(group.all.upper))",
                "\(tail.agreed) of \(tail.audited)",
                tail.audited == 0 ? "-" : percent(tail.agreement),
                tail.audited == 0 ? "-" : "\(percent(tail.lower))-\(percent(tail.upper))", now,
            ])
        }
        return table.render()
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

    /// An answer cut to 40 characters, for a table cell.
    static func clip(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.count <= 40 ? line : String(line.prefix(39)) + "…"
    }
}
