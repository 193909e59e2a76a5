import Foundation
import Yams

/// The nested and free-form settings of a spec: constraints, budget, schedule, timezone.
extension JobSpecParser {
    static func constraints(_ root: YAMLMapping) throws(OffpeakError) -> JobSpec.Constraints {
        let allowed = ["network", "power", "battery_not_low"]
        guard let mapping = try root.mapping("constraints", allowed: allowed) else { return .init() }
        return JobSpec.Constraints(
            network: try mapping.choice("network", as: JobSpec.Constraints.Network.self) ?? .any,
            power: try mapping.choice("power", as: JobSpec.Constraints.Power.self) ?? .any,
            batteryNotLow: try mapping.bool("battery_not_low") ?? false)
    }

    static func budget(_ root: YAMLMapping) throws(OffpeakError) -> JobSpec.Budget {
        let allowed = ["max_input_tokens", "max_output_tokens", "max_calls", "max_dollars", "per_day"]
        guard let mapping = try root.mapping("budget", allowed: allowed) else { return .init() }
        let tokens = 1...ValueLimits.tokens
        return JobSpec.Budget(
            maxInputTokens: try mapping.wholeNumber("max_input_tokens", in: tokens),
            maxOutputTokens: try mapping.wholeNumber("max_output_tokens", in: tokens),
            maxCalls: try mapping.wholeNumber("max_calls", in: 1...ValueLimits.calls),
            maxDollars: try mapping.number("max_dollars", in: 0...ValueLimits.dollars, exclusiveLower: true),
            perDay: try mapping.number("per_day", in: 0...ValueLimits.dollars, exclusiveLower: true))
    }

    /// `batching: off`, or `batching: {max_items: 8, max_item_tokens: 1500}`.
    static func batching(_ root: YAMLMapping) throws(OffpeakError) -> JobSpec.Batching {
        guard let node = root.value("batching") else { return .init() }
        if node.scalar != nil {
            let text = try root.reader.string(node, at: "batching")
            guard text == "off" || text == "on" else {
                throw root.reader.error(
                    "batching",
                    "expected 'off', 'on' or a mapping with max_items and max_item_tokens, got '\(text)'",
                    at: node)
            }
            return JobSpec.Batching(enabled: text == "on")
        }
        let allowed = ["max_items", "max_item_tokens", "min_agreement"]
        guard let mapping = try root.mapping("batching", allowed: allowed) else { return .init() }
        let maxItems = try mapping.wholeNumber("max_items", in: 1...100)
        var batching = JobSpec.Batching(
            enabled: true, maxItems: maxItems ?? 8,
            maxItemTokens: try mapping.wholeNumber("max_item_tokens", in: 1...1_000_000) ?? 1500)
        batching.maxItemsGiven = maxItems == nil ? nil : true
        batching.minAgreement = try mapping.share("min_agreement", belowOne: true)
        return batching
    }

    /// `audit: off`, `on`, a rate (`audit: 0.05`), or
    /// `audit: {agree: 95%, rate: 2%, max_share: 3%, proving_share: 25%}`.
    static func audit(_ root: YAMLMapping) throws(OffpeakError) -> JobSpec.Audit? {
        guard let node = root.value("audit") else { return nil }
        if let scalar = node.scalar, scalar.string == "off" || scalar.string == "on" {
            return JobSpec.Audit(enabled: scalar.string == "on")
        }
        if node.scalar != nil {
            var audit = JobSpec.Audit()
            do {
                audit.rate = try root.share("audit") ?? audit.rate
            } catch {
                throw root.reader.error(
                    "audit",
                    "expected 'off', 'on', a rate (like 0.02 or 2%) or a mapping with agree, rate, "
                        + "max_share and proving_share, got '\(node.scalar?.string ?? "")'", at: node)
            }
            return audit
        }
        let allowed = ["agree", "rate", "max_share", "proving_share"]
        guard let mapping = try root.mapping("audit", allowed: allowed) else { return nil }
        var audit = JobSpec.Audit()
        audit.agree = try mapping.share("agree", belowOne: true)
        audit.rate = try mapping.share("rate") ?? audit.rate
        audit.maxShare = try mapping.share("max_share") ?? audit.maxShare
        audit.provingShare = try mapping.share("proving_share")
        return audit
    }

    /// `digest: {template: "… {{changes}} …", max_tokens: 600}`: the template must name
    /// `{{changes}}` (it may name `{{count}}` too); `max_tokens` defaults to the job's.
    static func digest(_ root: YAMLMapping) throws(OffpeakError) -> JobSpec.Digest? {
        guard let mapping = try root.mapping("digest", allowed: ["template", "max_tokens"]) else {
            return nil
        }
        guard let node = mapping.value("template"), let source = try mapping.string("template") else {
            throw mapping.missing("template", "the digest's user message, naming {{changes}}")
        }
        let template: Template
        do { template = try Template(source) } catch {
            throw root.reader.error(mapping.path("template"), "not a template: \(error)", at: node)
        }
        let allowed: Set = [JobSpec.Digest.changesVariable, "count"]
        guard template.variables.contains(JobSpec.Digest.changesVariable),
            template.variables.isSubset(of: allowed)
        else {
            throw root.reader.error(
                mapping.path("template"),
                "expected a template naming {{changes}} (and, if you like, {{count}}), got '\(source)'",
                at: node)
        }
        let jobMaxTokens = try root.wholeNumber("max_tokens", in: 1...200_000) ?? 512
        let maxTokens = try mapping.wholeNumber("max_tokens", in: 1...200_000) ?? jobMaxTokens
        return JobSpec.Digest(template: template, maxTokens: maxTokens)
    }

    /// `chunking: off`, `on`, or `chunking: {max_tokens: 6000, overlap: 200}`; on by default for
    /// `summarize` jobs. The overlap must stay under half a chunk, so every chunk adds new text.
    static func chunking(_ root: YAMLMapping, kind: JobSpec.Kind) throws(OffpeakError) -> JobSpec.Chunking {
        let standard = kind == .summarize ? JobSpec.Chunking() : .off
        guard let node = root.value("chunking") else { return standard }
        if node.scalar != nil {
            let text = try root.reader.string(node, at: "chunking")
            guard text == "off" || text == "on" else {
                throw root.reader.error(
                    "chunking",
                    "expected 'off', 'on' or a mapping with max_tokens and overlap, got '\(text)'",
                    at: node)
            }
            return text == "on" ? JobSpec.Chunking() : .off
        }
        let allowed = ["max_tokens", "overlap"]
        guard let mapping = try root.mapping("chunking", allowed: allowed) else { return standard }
        let maxTokens = try mapping.wholeNumber("max_tokens", in: 100...1_000_000) ?? 6000
        let most = (maxTokens - 1) / 2
        let overlap = try mapping.wholeNumber("overlap", in: 0...most) ?? min(200, most)
        return JobSpec.Chunking(enabled: true, maxTokens: maxTokens, overlap: overlap)
    }

    /// A cron expression or macro, parsed so a bad field is reported here, at the node.
    static func schedule(_ root: YAMLMapping) throws(OffpeakError) -> String? {
        guard let text = try root.string("schedule") else { return nil }
        let expression: CronExpression
        do {
            expression = try CronExpression(text)
        } catch {
            throw root.reader.error("schedule", error.description, at: root.value("schedule"))
        }
        // A possible expression fires within any 8 years, in any zone; 2001 is as good a start as any.
        guard expression.next(after: Date(timeIntervalSince1970: 978_307_200), in: .gmt) != nil else {
            throw root.reader.error(
                "schedule", "'\(expression.text)' never fires: none of its months has such a day",
                at: root.value("schedule"))
        }
        return expression.text
    }

    /// An IANA zone name Foundation knows, e.g. `Europe/Berlin` or `UTC`.
    static func timezone(_ root: YAMLMapping) throws(OffpeakError) -> String? {
        guard let name = try root.string("timezone") else { return nil }
        guard TimeZone(identifier: name) != nil else {
            throw root.reader.error(
                "timezone", "expected a time zone name like Europe/Berlin or UTC, got '\(name)'",
                at: root.value("timezone"))
        }
        return name
    }
}
