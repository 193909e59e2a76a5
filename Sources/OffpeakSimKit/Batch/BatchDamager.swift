import Synchronization

/// Damages batched answers at random as `DamagePolicy` says, repeatably under `--seed`.
///
/// The generator is its own stream, derived from the sim's seed but apart from the fault
/// injector's, so turning damage on never changes which calls get faults. All draws for one
/// answer are taken under one lock, so with a fixed seed the n-th batched answer always gets
/// the same damage, however many items the answers before it had.
public final class BatchDamager: Sendable {
    /// Mixed into the seed so damage and faults draw from different sequences.
    static let streamSalt: UInt64 = 0xDA3A_6E00_BA7C_4ED1

    public let policy: DamagePolicy
    private let seed: UInt64
    private let random: Mutex<SplitMix64>

    public init(policy: DamagePolicy = .none, seed: UInt64 = 0) {
        self.policy = policy
        self.seed = seed ^ Self.streamSalt
        self.random = Mutex(SplitMix64(seed: seed ^ Self.streamSalt))
    }

    /// `answer`, damaged or not, and the damage done (one kind per damaged item; `wrap` at most
    /// once). Takes no draw when the policy is inactive.
    public func damage(_ answer: BatchAnswer) -> (answer: BatchAnswer, damage: [DamagePolicy.Kind]) {
        guard policy.isActive else { return (answer, []) }
        return random.withLock { Self.damage(answer, policy: policy, using: &$0) }
    }

    /// Restarts the sequence from the seed, so a reset sim damages the same answers again.
    public func reset() {
        random.withLock { $0 = SplitMix64(seed: seed) }
    }

    /// The wrappings a `wrap` draws from: prose, a code fence, or both.
    static let wrappings: [BatchAnswer.Wrapping] = [
        .init(prefix: "Here are the answers:\n```json\n", suffix: "\n```\nLet me know if you need more."),
        .init(prefix: "```json\n", suffix: "\n```"),
        .init(
            prefix: "Sure! Here is the JSON object you asked for:\n\n",
            suffix: "\n\nEach value answers its item."),
    ]

    /// Decides each item's fate in order (damaged with `policy.rate`, then one kind of
    /// `policy.kinds`), then applies it. A `reorder` needs two entries to move between and is
    /// neither applied nor reported when the answer has fewer.
    static func damage(
        _ answer: BatchAnswer, policy: DamagePolicy, using random: inout some RandomNumberGenerator
    ) -> (answer: BatchAnswer, damage: [DamagePolicy.Kind]) {
        var entries: [BatchAnswer.Entry] = []
        var done: [DamagePolicy.Kind] = []
        var reordered: [Int] = []
        var wrap = false
        for entry in answer.entries {
            let kind =
                Double.random(in: 0..<1, using: &random) < policy.rate
                ? policy.kinds.randomElement(using: &random) : nil
            switch kind {
            case .drop:
                done.append(.drop)
            case .duplicate:
                entries.append(entry)
                let wrong = wrongAnswer(for: entry, among: answer.entries)
                entries.append(.init(key: entry.key, value: .string(wrong), item: entry.item))
                done.append(.duplicate)
            case .garble:
                let values: [BatchAnswer.Value] = [.null, .number(entry.item + 1), .string("")]
                entries.append(
                    .init(
                        key: entry.key, value: values[Int.random(in: 0..<3, using: &random)], item: entry.item
                    ))
                done.append(.garble)
            case .reorder:
                entries.append(entry)
                reordered.append(entry.item)
            case .wrap:
                entries.append(entry)
                wrap = true
            case nil:
                entries.append(entry)
            }
        }
        for item in reordered where entries.count >= 2 {
            guard let from = entries.firstIndex(where: { $0.item == item }) else { continue }
            let moved = entries.remove(at: from)
            var to = Int.random(in: 0..<entries.count, using: &random)
            if to >= from { to += 1 }
            entries.insert(moved, at: to)
            done.append(.reorder)
        }
        var damaged = BatchAnswer(entries: entries, wrapping: answer.wrapping)
        if wrap, let wrapping = wrappings.randomElement(using: &random) {
            damaged.wrapping = wrapping
            done.append(.wrap)
        }
        return (damaged, done)
    }

    /// A plausible but wrong answer for a repeated key: another item's answer when one differs,
    /// else the answer reversed, else the answer said again with a tail; never the right one.
    static func wrongAnswer(for entry: BatchAnswer.Entry, among entries: [BatchAnswer.Entry]) -> String {
        guard case .string(let right) = entry.value else { return "" }
        let count = entries.count
        let position = entries.firstIndex(of: entry) ?? 0
        for offset in 1..<max(count, 1) {
            let other = entries[(position + offset) % count]
            if case .string(let text) = other.value, text != right { return text }
        }
        let reversed = String(right.reversed())
        return reversed != right ? reversed : right + " (again)"
    }
}
