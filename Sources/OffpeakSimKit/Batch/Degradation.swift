/// `--degrading-model NAME:KIND:SHAPE`: a model whose batched answers go wrong with the item's
/// place in the prompt, while it answers each item sent alone right.
///
/// Models answering many items in one prompt lose track as the prompt grows: later items get a
/// plausible label of the wrong item, the answer meant for their neighbour, or half an answer.
/// The answer keeps its shape (valid JSON keyed by the ids, as a schema or a forced tool holds
/// it), so only asking some items again alone (a batch audit) can tell. Two shapes:
/// - a **cliff** (`AFTER`, a whole number): items at positions up to `after` (1-based, in the
///   prompt's order) are answered right, every one after it wrong, so a batched prompt of at most
///   `after` items is answered right and the damage grows with the batch;
/// - a **slope** (`slope=RATE`, like `slope=1.5%`): the item at position p is wrong with a
///   chance of p times the rate (at most 1), drawn from the seed, the item's text and its place,
///   so a prompt of 16 items at 1.5 % is about 13 % wrong and one of 4 about 4 %: the steady
///   decline real models show (BatchPrompt, ICLR 2024; ManyIFEval, 2025).
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

    /// Which items go wrong.
    public enum Shape: Sendable, Equatable {
        /// Every item after this position (1-based); `SimOptions.validate()` wants at least 1.
        case after(Int)
        /// The item at position p with a chance of p times this rate (more than 0, at most 1).
        case slope(Double)
    }

    public var kind: Kind
    public var shape: Shape

    public init(kind: Kind, shape: Shape) {
        self.kind = kind
        self.shape = shape
    }

    /// A cliff after `after`.
    public init(kind: Kind, after: Int) {
        self.init(kind: kind, shape: .after(after))
    }

    /// The labels a `wrong-label` item draws from, as a ticket classifier would answer.
    public static let labels = ["billing", "bug", "feature", "account", "shipping", "other"]

    /// Mixed into the seed so these draws are apart from the fault, damage and weak-model ones.
    static let streamSalt: UInt64 = 0xDE6A_ADE0_1AB3_15C0

    /// `answer` (the right batched answer to `items`) with the items the shape picks degraded,
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
            guard entry.item < items.count,
                wrong(position: entry.item + 1, item: items[entry.item], seed: seed),
                let text = right[entry.item],
                let wrong = wrongAnswer(
                    to: text, item: items[entry.item], before: right[entry.item - 1], seed: seed),
                wrong != text
            else { continue }
            degraded.entries[index].value = .string(wrong)
            count += 1
        }
        return (degraded, count)
    }

    /// Whether the item at `position` (from 1) goes wrong.
    func wrong(position: Int, item: BatchItem, seed: UInt64) -> Bool {
        switch shape {
        case .after(let after):
            return position > after
        case .slope(let rate):
            var random = SplitMix64(seed: seed ^ Self.slopeSalt ^ stableHash(item.text) ^ UInt64(position))
            let draw = Double(random.next() >> 11) / Double(1 << 53)
            return draw < min(1, rate * Double(position))
        }
    }

    /// Mixed into the seed for the slope's draws, apart from the labels'.
    static let slopeSalt: UInt64 = 0x51_0BE5_10BE_7A1E

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
    /// - Parameter specs: one `NAME:KIND:SHAPE` per flag, SHAPE a position (`small:wrong-label:4`)
    ///   or a slope (`small:wrong-label:slope=1.5%`). NAME is everything before the last two
    ///   colons, so a model name may hold colons (`qwen2.5:7b`).
    /// - Throws: `SimConfigError.badOption` for a spec without three parts, an unknown KIND, a
    ///   SHAPE that is neither a whole number nor `slope=RATE`, or a model named twice.
    public static func models(parsing specs: [String]) throws -> [String: Degradation] {
        var models: [String: Degradation] = [:]
        for spec in specs {
            let parts = spec.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count >= 3 else {
                throw SimConfigError(
                    .badOption,
                    "--degrading-model expects NAME:KIND:AFTER or NAME:KIND:slope=RATE (e.g. small:wrong-label:4), "
                        + "got '\(spec)'")
            }
            let name = parts.dropLast(2).joined(separator: ":")
            let kindName = String(parts[parts.count - 2])
            guard let kind = Kind(rawValue: kindName) else {
                throw SimConfigError(
                    .badOption,
                    "--degrading-model \(spec): unknown KIND '\(kindName)'; expected \(Kind.allNames)")
            }
            let shapeText = String(parts[parts.count - 1])
            guard let shape = Self.shape(shapeText) else {
                throw SimConfigError(
                    .badOption,
                    "--degrading-model \(spec): expected AFTER, a whole number, or slope=RATE (like slope=1.5%), "
                        + "got '\(shapeText)'")
            }
            guard models[name] == nil else {
                throw SimConfigError(.badOption, "--degrading-model names model '\(name)' more than once")
            }
            models[name] = Degradation(kind: kind, shape: shape)
        }
        return models
    }

    /// `4` (a cliff) or `slope=1.5%` / `slope=0.015`; nil for anything else.
    static func shape(_ text: String) -> Shape? {
        if let after = Int(text) { return .after(after) }
        guard text.hasPrefix("slope=") else { return nil }
        var rate = String(text.dropFirst("slope=".count))
        var scale = 1.0
        if rate.hasSuffix("%") {
            rate.removeLast()
            scale = 0.01
        }
        return Double(rate).map { .slope($0 * scale) }
    }
}
