import Foundation

/// A batched item asked again alone, to check its batched answer (`AuditRecord`): the call it was
/// answered in, its place there, and what that answer said.
struct AuditTarget: Sendable, Equatable {
    /// Items in the batched prompt, and this item's place in it, from 1.
    var size: Int
    var position: Int
    var batchedAnswer: String
    /// Whether the prompt was a probe (its size not yet shown to hold).
    var probe = false
}

/// Which items of a batched prompt the audit also asks alone: the tail first.
///
/// Batched answers go wrong later in a prompt before they go wrong early (BatchPrompt, ICLR 2024;
/// the steady decline of ManyIFEval), so an audit at the tail carries the most evidence for what it
/// costs, and the tail is where a size is judged (`AuditEvidence.isTail`). Some prompts are also
/// audited at their first place, to compare.
///
/// - A **probe** (a prompt of a size not yet shown to hold) is audited at its whole tail (its last
///   quarter, the last place at least), and the first probe of a size with no audit of its head
///   yet at its first place too: proving a size that holds costs its tail's audits and one more.
/// - A prompt of a size that **holds** is **sampled**: it falls in the sample with a chance of
///   `rate` times its size (by a hash of its first request, so a pass that resumes draws the same
///   prompts), and is audited at its last place, and one time in `headEvery` at its first too:
///   about `rate` audits an item.
enum AuditSampling {
    /// One prompt in this many audited also has its first place audited.
    static let headEvery = 4
    /// Most probes of one size a round sends.
    static let mostProbes = 16

    /// The places (from 0) of a prompt of `size` items at its tail: its last quarter, the last
    /// place at least.
    static func tail(size: Int) -> [Int] {
        guard size > 0 else { return [] }
        return Array((size - max(1, size / 4))..<size)
    }

    /// The places (from 0) a probe of `size` items audits: its tail, at most its last `most`
    /// places of it (the round's probes audit no more than the test needs), and its first place
    /// when `head` (and not already in the tail).
    static func probePlaces(size: Int, head: Bool, most: Int = .max) -> [Int] {
        let tail = Array(tail(size: size).suffix(max(1, most)))
        guard head, size > 1, tail.first != 0 else { return tail }
        return [0] + tail
    }

    /// The tail audits a round's probes of a size carry: half of those the test still needs if
    /// every one agreed (`agreements`), or all of them (`whole`). The probes of a live round come
    /// back together, so a size that fails stops with little of its round wasted, and one that
    /// holds is proven in a few rounds; a provider batch's round is the whole run as often as not,
    /// so it carries all the test needs.
    static func roundAudits(agreements: Int, whole: Bool) -> Int {
        max(1, whole ? agreements : (agreements + 1) / 2)
    }

    /// How many probes of a size a round sends: enough for its `roundAudits`, at most `mostProbes`.
    static func probes(size: Int, agreements: Int, whole: Bool = false) -> Int {
        let perProbe = max(1, tail(size: size).count)
        let wanted = roundAudits(agreements: agreements, whole: whole)
        return min(mostProbes, (wanted + perProbe - 1) / perProbe)
    }

    /// The places (from 0) a prompt of a size that holds audits: none when it is not drawn into the
    /// sample (with a chance of `rate` times `size`), else its last place, and its first one time
    /// in `headEvery`.
    static func sampledPlaces(size: Int, firstRequestID: String, rate: Double) -> [Int] {
        guard size > 1, rate > 0, draw("audit:" + firstRequestID) < rate * Double(size) else { return [] }
        let head = draw("audit-head:" + firstRequestID) < 1 / Double(headEvery)
        return head ? [0, size - 1] : [size - 1]
    }

    /// A number in 0..<1 from the first 8 bytes of the SHA-256 of `text`: the same for the same
    /// text in every process.
    static func draw(_ text: String) -> Double {
        let digest = SHA256.hex(text)
        guard let value = UInt64(digest.prefix(16), radix: 16) else { return 1 }
        return Double(value) / 18_446_744_073_709_551_616.0
    }
}
