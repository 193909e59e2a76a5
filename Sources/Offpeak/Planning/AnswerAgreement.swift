import Foundation

/// Whether a batched answer says what the same item's answer alone says, with no model to ask.
///
/// Both answers are normalized the same way: lowercased, accents folded, cut into words at
/// anything that is not a letter or a digit, each number written one way (`3`, `3.0` and `3.00`
/// are one number). Then:
/// - **short answers** (labels, numbers, yes/no, short phrases: both at most `shortWords` words)
///   agree when their words are the same, in order: the score is 1 or 0;
/// - **long answers** are scored by token-level F1, as SQuAD scores answers: the words both share
///   (counted with repeats) over each one's length, precision and recall's harmonic mean. They
///   agree from `longThreshold` (0.7): a paraphrase keeps most of its words, a neighbour's answer
///   or one cut at half its length does not (an answer cut to half scores 0.67).
enum AnswerAgreement {
    /// Answers of at most this many words are compared word for word.
    static let shortWords = 8
    /// Long answers agree from this F1.
    static let longThreshold = 0.7

    struct Verdict: Sendable, Equatable {
        var agreed: Bool
        /// 0...1: 1 or 0 for short answers, the F1 for long ones.
        var similarity: Double
    }

    static func compare(_ batched: String, _ single: String) -> Verdict {
        let a = words(batched)
        let b = words(single)
        if a.count <= shortWords, b.count <= shortWords {
            let same = a == b
            return Verdict(agreed: same, similarity: same ? 1 : 0)
        }
        let score = f1(a, b)
        return Verdict(agreed: score >= longThreshold, similarity: score)
    }

    /// The answer's words, normalized.
    static func words(_ text: String) -> [String] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .lowercased()
        var words: [String] = []
        var current = ""
        var previous: Character?
        var characters = Array(folded)
        characters.append(" ")
        for (index, character) in characters.enumerated() {
            let next = index + 1 < characters.count ? characters[index + 1] : " "
            // A decimal point between digits stays in its number.
            let decimalPoint =
                (character == "." || character == ",") && previous?.isNumber == true && next.isNumber
            if character.isLetter || character.isNumber || decimalPoint {
                current.append(character)
            } else if !current.isEmpty {
                words.append(number(current) ?? current)
                current = ""
            }
            previous = character
        }
        return words
    }

    /// A number written one way: `3.50` and `3.5` are `3.5`, `1,000` is `1000`, `3,5` is `3.5`.
    private static func number(_ word: String) -> String? {
        guard word.first?.isNumber == true, word.allSatisfy({ $0.isNumber || $0 == "." || $0 == "," }) else {
            return nil
        }
        let groups = word.split(separator: ",", omittingEmptySubsequences: false)
        let thousands =
            groups.count > 1 && groups.dropFirst().allSatisfy { $0.prefix { $0 != "." }.count == 3 }
        let plain =
            thousands || groups.count > 2
            ? word.replacingOccurrences(of: ",", with: "") : word.replacingOccurrences(of: ",", with: ".")
        guard let value = Double(plain), value.isFinite else { return nil }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// Token-level F1 of two word lists (multisets).
    static func f1(_ a: [String], _ b: [String]) -> Double {
        guard !a.isEmpty, !b.isEmpty else { return a.isEmpty && b.isEmpty ? 1 : 0 }
        var counts: [String: Int] = [:]
        for word in b { counts[word, default: 0] += 1 }
        var shared = 0
        for word in a where counts[word, default: 0] > 0 {
            counts[word, default: 0] -= 1
            shared += 1
        }
        guard shared > 0 else { return 0 }
        let precision = Double(shared) / Double(a.count)
        let recall = Double(shared) / Double(b.count)
        return 2 * precision * recall / (precision + recall)
    }
}
