import Foundation

/// One model's batched prompts in `offpeak status`: what they kept, why the rest was rejected, and
/// what offpeak does about it now (`BatchFitness`). Only models with something to say are listed:
/// a model whose batched answers all held shows nothing.
struct FitnessLine: Sendable, Codable, Equatable {
    var provider: String
    var model: String
    var prompts: Int
    var itemsAsked: Int
    var itemsKept: Int
    /// Items rejected, by why.
    var rejections: [String: Int]
    /// Most items a prompt carries now; nil: what each job allows.
    var itemLimit: Int?
    var alone: Bool
    var pausedUntil: Date?
    var structuredRefusal: String?
    /// The form used since `json_schema` was refused (`json_object` with the schema); nil: none,
    /// structured output is refused whole.
    var structuredFallback: String?

    init?(_ fitness: BatchFitness, now: Date) {
        let refused = fitness.refusesStructured(at: now)
        let limit = fitness.itemLimit(at: now)
        guard fitness.itemsKept < fitness.itemsAsked || limit != nil || refused else { return nil }
        provider = fitness.provider
        model = fitness.model
        prompts = fitness.prompts
        itemsAsked = fitness.itemsAsked
        itemsKept = fitness.itemsKept
        rejections = fitness.rejections
        itemLimit = limit
        alone = limit == 1
        pausedUntil = alone ? fitness.pausedUntil : nil
        // A provider with a second form (an OpenAI-compatible server that refused json_schema is
        // asked for json_object with the schema, `CallPlanning.answerForm`), until it refuses that too.
        let forms = ProviderKind(rawValue: provider)?.capabilities.structured.forms ?? []
        let fallback = forms.contains(.jsonObject) && !fitness.refuses(.jsonObject, at: now)
        structuredFallback = refused && fallback ? StructuredForm.jsonObject.rawValue : nil
        // Refused whole: the latest refusal's words (json_object's, when both were refused).
        let words =
            fallback ? fitness.structuredRefusal : fitness.jsonObjectRefusal ?? fitness.structuredRefusal
        structuredRefusal = refused ? words : nil
    }

    /// `no JSON object in the answer 150, missing from the answer 8`, most first.
    var rejectedCell: String {
        let reasons = rejections.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
        return reasons.isEmpty ? "-" : reasons.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    /// What offpeak does now: items alone until a time, at most N a prompt, or as each job says.
    var nowCell: String {
        var cell: String
        if alone, let until = pausedUntil {
            cell = "alone until \(BatchLine.time(until))"
        } else if let limit = itemLimit {
            cell = "at most \(limit) a prompt"
        } else {
            cell = "as each job says"
        }
        if let words = structuredRefusal {
            // The server's words cut short, so what is used now is still in the (shortened) cell.
            let refusal = TextTable.shortened(
                words.split(whereSeparator: \.isWhitespace).joined(separator: " "), to: 60)
            cell +=
                structuredFallback.map { "; json_schema refused (\(refusal)); \($0) with a schema used" }
                ?? "; structured output refused (\(refusal))"
        }
        return cell
    }

    static func text(_ lines: [FitnessLine]) -> String {
        guard !lines.isEmpty else { return "" }
        let table = TextTable(columns: ["MODEL", "PROMPTS", "ITEMS KEPT", "REJECTED", "NOW"])
        for line in lines {
            table.add([
                line.model, "\(line.prompts)", "\(line.itemsKept)/\(line.itemsAsked)",
                TextTable.shortened(line.rejectedCell, to: 100), TextTable.shortened(line.nowCell, to: 120),
            ])
        }
        return "\nbatched prompts that lost items:\n" + table.render()
    }
}
