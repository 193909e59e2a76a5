import Synchronization

/// `--weak-model`: batched prompts answered the way small local models answer them when nothing
/// holds them to the shape — prose instead of JSON, keys of their own, or an object they stop
/// writing half way — while each item sent alone is answered well.
///
/// offpeak found this against llama.cpp with a small model: 0 of 27 batched prompts came back as
/// a usable keyed object, and 3 of 3 did once a JSON schema held the server to the shape. So a
/// prompt whose answer form holds the shape (`AnswerForm.holdsShape`) is answered whole.
public final class WeakModel: Sendable {
    /// How a weak model spoils a batched answer; one is drawn per answer, repeatably under `--seed`.
    public enum Failure: String, CaseIterable, Sendable {
        /// A numbered list of answers, no JSON.
        case prose
        /// A JSON object keyed `item1`, `item2`, ... instead of the ids given.
        case wrongKeys = "wrong-keys"
        /// The object, stopped at half its length.
        case truncated
    }

    /// Mixed into the seed so these draws are apart from the fault and damage sequences.
    static let streamSalt: UInt64 = 0x3EA4_30DE_1F00_0B5E

    private let seed: UInt64
    private let random: Mutex<SplitMix64>

    public init(seed: UInt64) {
        self.seed = seed ^ Self.streamSalt
        self.random = Mutex(SplitMix64(seed: seed ^ Self.streamSalt))
    }

    /// Restarts the draws from the seed (`/sim/reset`).
    public func reset() {
        random.withLock { $0 = SplitMix64(seed: seed) }
    }

    /// The text a weak model writes for the batched answer `answer`, and how it failed.
    public func spoil(_ answer: BatchAnswer) -> (text: String, failure: Failure) {
        let failure = random.withLock { Failure.allCases.randomElement(using: &$0) } ?? .prose
        return (Self.text(of: answer, failing: failure), failure)
    }

    static func text(of answer: BatchAnswer, failing failure: Failure) -> String {
        switch failure {
        case .prose:
            let lines = answer.entries.enumerated().map { index, entry in
                "\(index + 1). \(entry.value.prose)"
            }
            return "Here are the answers to each item:\n\n" + lines.joined(separator: "\n")
        case .wrongKeys:
            let entries = answer.entries.enumerated().map { index, entry in
                BatchAnswer.Entry(key: "item\(index + 1)", value: entry.value, item: entry.item)
            }
            return BatchAnswer(entries: entries).text
        case .truncated:
            let full = answer.text
            return SimTokens.prefix(of: full, tokens: SimTokens.count(full) / 2)
        }
    }
}

extension BatchAnswer.Value {
    /// The value as a weak model would write it in a list.
    fileprivate var prose: String {
        switch self {
        case .string(let text): return text
        case .null: return "(no answer)"
        case .number(let number): return String(number)
        }
    }
}
