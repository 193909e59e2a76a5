/// Splits a batched answer into one answer per item, trusting nothing.
///
/// Every expected id must appear exactly once with a non-empty string; an item that does not goes
/// back to be asked again, in a smaller batch. If the answer holds a key that was not asked for, no
/// item's answer is trusted: a model that invents or shifts ids may have shifted the answers too
/// (answers drift with an item's position, Lin et al., ICLR 2024).
enum AnswerSplitter {
    enum Rejection: String, Equatable, Sendable {
        case noJSON = "no JSON object in the answer"
        case unexpectedKey = "the answer has ids that were not asked for"
        case missing = "missing from the answer"
        case duplicated = "answered more than once"
        case empty = "empty answer"
        case malformed = "answer is not a string"
        case cutOff = "the answer was cut off at max_tokens"
    }

    struct Split: Equatable {
        var answers: [String: String] = [:]
        var rejected: [String: Rejection] = [:]
    }

    static func split(_ answer: String, ids: [String]) -> Split {
        var split = Split()
        guard let members = BatchAnswerParser.members(in: answer) else {
            for id in ids { split.rejected[id] = .noJSON }
            return split
        }
        let expected = Set(ids)
        if members.contains(where: { !expected.contains($0.key) }) {
            for id in ids { split.rejected[id] = .unexpectedKey }
            return split
        }
        let byKey = Dictionary(grouping: members, by: \.key)
        for id in ids {
            guard let found = byKey[id] else {
                split.rejected[id] = .missing
                continue
            }
            guard found.count == 1, let member = found.first else {
                split.rejected[id] = .duplicated
                continue
            }
            guard let text = member.text else {
                split.rejected[id] = .malformed
                continue
            }
            let trimmed = text.trimmingWhitespace()
            if trimmed.isEmpty {
                split.rejected[id] = .empty
            } else {
                split.answers[id] = trimmed
            }
        }
        return split
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
