import Foundation
import Testing

@testable import OffpeakSimKit

/// Each kind of damage must do what a misbehaving model does, and `--seed` must make it
/// repeatable, so a test of offpeak's recovery fails the same way every run.
struct SimDamageTests {
    let answer = BatchAnswer(
        items: ["a", "b", "c", "d"].map { BatchItem(id: $0, text: "") },
        answers: ["Answer: A.", "Answer: B.", "Answer: C.", "Answer: D."])

    /// Every item damaged, with only `kind`.
    private func damaged(
        _ kind: DamagePolicy.Kind, seed: UInt64 = 1, answer: BatchAnswer? = nil
    ) throws -> (answer: BatchAnswer, damage: [DamagePolicy.Kind]) {
        var random = SplitMix64(seed: seed)
        let policy = try DamagePolicy(rate: 1, kinds: [kind])
        return BatchDamager.damage(answer ?? self.answer, policy: policy, using: &random)
    }

    @Test func dropLeavesItemsOut() throws {
        let result = try damaged(.drop)
        #expect(result.answer.entries.isEmpty)
        #expect(result.answer.text == "{}")
        #expect(result.damage == [.drop, .drop, .drop, .drop])
    }

    @Test func duplicateWritesTheKeyTwiceWithAWrongSecondAnswer() throws {
        let result = try damaged(.duplicate)
        #expect(result.answer.entries.map(\.key) == ["a", "a", "b", "b", "c", "c", "d", "d"])
        for pair in stride(from: 0, to: 8, by: 2) {
            #expect(result.answer.entries[pair] == answer.entries[pair / 2])
            #expect(result.answer.entries[pair + 1].value != answer.entries[pair / 2].value)
        }
        #expect(result.answer.text.hasPrefix(#"{"a":"Answer: A.","a":"Answer: B.","b":"#))
        let lone = BatchAnswer(items: [BatchItem(id: "x", text: "")], answers: ["Answer: X."])
        #expect(try damaged(.duplicate, answer: lone).answer.text == #"{"x":"Answer: X.","x":".X :rewsnA"}"#)
        let same = BatchAnswer(entries: [.init(key: "p", value: .string("aba"), item: 0)])
        #expect(BatchDamager.wrongAnswer(for: same.entries[0], among: same.entries) == "aba (again)")
    }

    @Test func garbleReplacesTheValueWithANonAnswer() throws {
        let result = try damaged(.garble, seed: 3)
        #expect(result.answer.entries.map(\.key) == ["a", "b", "c", "d"])
        for entry in result.answer.entries {
            #expect([BatchAnswer.Value.null, .number(entry.item + 1), .string("")].contains(entry.value))
        }
        #expect(result.damage == [.garble, .garble, .garble, .garble])
        let object = try JSONSerialization.jsonObject(with: Data(result.answer.text.utf8))
        #expect((object as? [String: Any])?.count == 4)
    }

    @Test func reorderMovesItemsButKeepsEveryAnswer() throws {
        let result = try damaged(.reorder, seed: 5)
        #expect(result.answer.entries.map(\.key) != ["a", "b", "c", "d"])
        #expect(Set(result.answer.entries.map(\.key)) == ["a", "b", "c", "d"])
        for entry in result.answer.entries {
            #expect(entry == answer.entries[entry.item])
        }
        #expect(result.damage == [.reorder, .reorder, .reorder, .reorder])
        // One entry has nowhere else to go: nothing is moved, nothing reported.
        let lone = BatchAnswer(items: [BatchItem(id: "x", text: "")], answers: ["Answer: X."])
        let single = try damaged(.reorder, answer: lone)
        #expect(single.answer == lone)
        #expect(single.damage.isEmpty)
    }

    @Test func wrapSurroundsTheWholeObjectOnce() throws {
        let result = try damaged(.wrap)
        #expect(result.damage == [.wrap])
        #expect(result.answer.entries == answer.entries)
        let wrapping = try #require(result.answer.wrapping)
        #expect(BatchDamager.wrappings.contains(wrapping))
        let bare = answer.text
        #expect(result.answer.text == wrapping.prefix + bare + wrapping.suffix)
        #expect(result.answer.text != bare)
    }

    @Test func rateZeroTakesNoDrawAndChangesNothing() {
        let damager = BatchDamager(policy: .none, seed: 9)
        let result = damager.damage(answer)
        #expect(result.answer == answer)
        #expect(result.damage.isEmpty)
    }

    @Test func sameSeedDamagesTheSameAndResetReplays() throws {
        let policy = try DamagePolicy(rate: 0.5, kinds: DamagePolicy.Kind.allCases)
        func run(_ damager: BatchDamager) -> [String] {
            (0..<30).map { _ in damager.damage(answer).answer.text }
        }
        let first = BatchDamager(policy: policy, seed: 42)
        let texts = run(first)
        #expect(run(BatchDamager(policy: policy, seed: 42)) == texts)
        #expect(run(BatchDamager(policy: policy, seed: 43)) != texts)
        #expect(texts.contains(answer.text), "some answers are left whole at rate 0.5")
        #expect(texts.contains { $0 != answer.text })
        first.reset()
        #expect(run(first) == texts)
    }

    @Test func parsesTheDamageFlag() throws {
        #expect(try DamagePolicy(rate: 0.2, parsing: "drop, Garble,drop").kinds == [.drop, .garble])
        #expect(DamagePolicy.Kind.allNames == "drop,duplicate,garble,wrap,reorder")
        let all = try DamagePolicy(rate: 0.1, parsing: DamagePolicy.Kind.allNames)
        #expect(all.kinds == DamagePolicy.Kind.allCases)
        #expect(throws: SimConfigError.self) { try DamagePolicy(rate: 0.1, parsing: "drop,explode") }
        #expect(throws: SimConfigError.self) { try DamagePolicy(rate: 0.1, parsing: "") }
        #expect(throws: SimConfigError.self) { try DamagePolicy(rate: 1.5, parsing: "drop") }
        #expect(throws: SimConfigError.self) { try DamagePolicy(rate: -0.1, parsing: "drop") }
        #expect(throws: SimConfigError.self) { try DamagePolicy(rate: .nan, parsing: "drop") }
    }
}
