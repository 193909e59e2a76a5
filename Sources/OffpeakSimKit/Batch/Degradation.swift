/// `--degrading-model NAME:KIND:AFTER`: a model whose batched answers go wrong after a position,
/// while it answers each item sent alone right.
///
/// Models answering many items in one prompt lose track as the prompt grows: later items get a
/// plausible label of the wrong item, the answer meant for their neighbour, or half an answer.
/// The answer keeps its shape (valid JSON keyed by the ids, as a schema or a forced tool holds
/// it), so only asking some items again alone (a batch audit) can tell. Items at positions up to
/// `after` (1-based, in the prompt's order) are answered right, so a batched prompt of at most
/// `after` items is answered right and the damage grows with the batch.
public struct Degradation: Sendable, Equatable {
    /// What a degraded item gets instead of its answer, named as the flag spells it.
    public enum Kind: String, CaseIterable, Sendable {
        /// `Answer: ` and a label of `Degradation.labels`, never the right answer; drawn from the
        /// seed and the item's text, so the same item gets the same label under `--seed`.
        case wrongLabel = "wrong-label"
        /// The right answer of the item just before it in the prompt.
        case neighbour
        /// Its right answer cut to half its tokens.
        case cut

        /// Every kind name, for error messages: `wrong-label, neighbour or cut`.
        static var allNames: String {
            let names = allCases.map(\.rawValue)
            return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
        }
    }

    public var kind: Kind
    /// The last position (1-based) answered right; `SimOptions.validate()` wants at least 1.
    public var after: Int

    public init(kind: Kind, after: Int) {
        self.kind = kind
        self.after = after
    }

    /// The labels a `wrong-label` item draws from, as a ticket classifier would answer.
    public static let labels = ["billing", "bug", "feature", "account", "shipping", "other"]

    /// Mixed into the seed so these draws are apart from the fault, damage and weak-model ones.
    static let streamSalt: UInt64 = 0xDE6A_ADE0_1AB3_15C0

    /// `answer` (the right batched answer to `items`) with every item after `after` degraded,
    /// and how many items' answers changed. Pure: the same arguments give the same result.
    /// - Parameters:
    ///   - answer: the undamaged answer, one string entry per item (`AnswerComposer.batchAnswer`).
    ///   - items: the prompt's items, in order; an entry's `item` indexes them.
    ///   - seed: the sim's seed, for `wrong-label` draws.
    public func degrade(
        _ answer: BatchAnswer, items: [BatchItem], seed: UInt64
    ) -> (answer: BatchAnswer, degraded: Int) {
        var right: [Int: String] = [:]
        for entry in answer.entries {
            if case .string(let text) = entry.value { right[entry.item] = text }
        }
        var degraded = answer
        var count = 0
        for index in degraded.entries.indices {
            let entry = degraded.entries[index]
            guard entry.item + 1 > after, let text = right[entry.item], entry.item < items.count,
                let wrong = wrongAnswer(
                    to: text, item: items[entry.item], before: right[entry.item - 1], seed: seed),
                wrong != text
            else { continue }
            degraded.entries[index].value = .string(wrong)
            count += 1
        }
        return (degraded, count)
    }

    /// What this kind writes for an item whose right answer is `text`; nil when it has nothing
    /// to write (a `neighbour` with no item before it).
    private func wrongAnswer(to text: String, item: BatchItem, before: String?, seed: UInt64) -> String? {
        switch kind {
        case .wrongLabel:
            return Self.wrongLabel(for: item, rightAnswer: text, seed: seed)
        case .neighbour:
            return before
        case .cut:
            return SimTokens.prefix(of: text, tokens: SimTokens.count(text) / 2)
        }
    }

    /// `Answer: LABEL` for a label of `labels`, drawn from `seed` and the FNV-1a hash of the
    /// item's text (never `Hasher`, which differs per process), and never `rightAnswer`.
    static func wrongLabel(for item: BatchItem, rightAnswer: String, seed: UInt64) -> String {
        let choices = labels.map { "Answer: " + $0 }.filter { $0 != rightAnswer }
        var random = SplitMix64(seed: seed ^ streamSalt ^ stableHash(item.text))
        return choices[Int(random.next() % UInt64(choices.count))]
    }
}

extension Degradation {
    /// The models `--degrading-model` names, each with its degradation.
    /// - Parameter specs: one `NAME:KIND:AFTER` per flag, e.g. `small:wrong-label:4`. NAME is
    ///   everything before the last two colons, so a model name may hold colons (`qwen2.5:7b`).
    /// - Throws: `SimConfigError.badOption` for a spec without three parts, an unknown KIND, an
    ///   AFTER that is not a whole number, or a model named twice.
    public static func models(parsing specs: [String]) throws -> [String: Degradation] {
        var models: [String: Degradation] = [:]
        for spec in specs {
            let parts = spec.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count >= 3 else {
                throw SimConfigError(
                    .badOption,
                    "--degrading-model expects NAME:KIND:AFTER (e.g. small:wrong-label:4), got '\(spec)'")
            }
            let name = parts.dropLast(2).joined(separator: ":")
            let kindName = String(parts[parts.count - 2])
            guard let kind = Kind(rawValue: kindName) else {
                throw SimConfigError(
                    .badOption,
                    "--degrading-model \(spec): unknown KIND '\(kindName)'; expected \(Kind.allNames)")
            }
            guard let after = Int(parts[parts.count - 1]) else {
                throw SimConfigError(
                    .badOption,
                    "--degrading-model \(spec): AFTER must be a whole number, got '\(parts[parts.count - 1])'"
                )
            }
            guard models[name] == nil else {
                throw SimConfigError(.badOption, "--degrading-model names model '\(name)' more than once")
            }
            models[name] = Degradation(kind: kind, after: after)
        }
        return models
    }
}
