import Foundation

/// What the batch audit has learned of one job's batched prompts to one model (`audit_records`, one
/// row per job, provider and model): how often a batched answer agreed with the same item asked
/// alone, per batch size, and what that decided.
///
/// A batched answer can keep its shape and lose its content: a small model that answers the first
/// items of a prompt well may give the later ones a neighbour's label. Only asking some of them
/// alone tells (`AnswerAgreement`). Each size is judged on its own tally:
/// - **proven** after `proofSamples` audited items with an agreement of at least `min_agreement`;
///   a smaller size than a proven one counts as proven too (answers degrade as prompts grow);
/// - **failed** once the Wilson interval's upper end (`WilsonInterval`) is below `min_agreement`
///   (confidently worse), or after `judgedSamples` items with the agreement below it. Prompts then
///   carry at most half as many items, down to one (batching off for the job and model), and the
///   failed size is probed again after a pause that doubles with each failed probe.
struct AuditRecord: Sendable, Equatable, Codable {
    var job: String
    var provider: String
    var model: String
    /// Audited items per batch size, since the size was last judged anew, smallest size first.
    var tallies: [Tally] = []
    /// Most items one prompt may carry now; nil: what the job allows.
    var cap: Int?
    /// The size that failed last, probed again from `probeAt`.
    var failedSize: Int?
    var probeAt: Date?
    /// Failed sizes since the last probe that held: each pause is twice the one before.
    var pauses = 0
    /// What the audit decided, the newest last (at most `decisionsKept`).
    var decisions: [Decision] = []
    var updatedAt: Date

    /// One batch size's audited items.
    struct Tally: Sendable, Equatable, Codable {
        var size: Int
        var audited = 0
        var agreed = 0
        /// Of `audited`, those from the last quarter of their prompt (`isLate`), where batched
        /// answers go wrong first; nil: none (a record written before it was counted).
        var late: Int?

        var agreement: Double { audited == 0 ? 1 : Double(agreed) / Double(audited) }
        var interval: WilsonInterval { WilsonInterval(successes: agreed, trials: audited) }
    }

    /// A change the audit made to how the job's items are packed.
    struct Decision: Sendable, Equatable, Codable {
        enum Kind: String, Sendable, Codable {
            /// The size's batched answers agree often enough: it is used without probing.
            case proven
            /// The size's batched answers disagree too often: prompts carry at most `cap` items.
            case halved
            /// Even two items a prompt disagree too often: the job's items go alone.
            case off
            /// The pause after a failure is over: the failed size is tried again.
            case probe
        }
        var at: Date
        var kind: Kind
        var size: Int
        var audited: Int
        var agreed: Int
        /// The cap it left; nil: none.
        var cap: Int?
    }

    /// How a batch size stands with the audit.
    enum Standing: Sendable, Equatable {
        case proven
        /// Not yet judged: its first prompts are probes, audited at several positions.
        case unproven
        case failed
    }

    /// Audited items a size needs before it is proven.
    static let proofSamples = 4
    /// Audited items after which an agreement below the minimum fails a size, whatever the interval.
    static let judgedSamples = 8
    static let firstPause: TimeInterval = 24 * 3600
    static let longestPause: TimeInterval = 7 * 24 * 3600
    static let decisionsKept = 20

    init(job: String, provider: String, model: String, at now: Date) {
        self.job = job
        self.provider = provider
        self.model = model
        self.updatedAt = now
    }

    /// The most items one prompt may carry at `now`; nil: what the job allows. A pause over, the
    /// failed size is tried again, and stays allowed while its probe is being judged.
    func itemLimit(at now: Date) -> Int? {
        if let failedSize, probeAt.map({ now >= $0 }) ?? true { return failedSize }
        return cap
    }

    func tally(size: Int) -> Tally? { tallies.first { $0.size == size } }

    /// How a prompt of `size` items stands under `minAgreement`. A size is proven only by a tally
    /// that reached its prompts' last quarter: the first places of a prompt answer well longest,
    /// so agreement there alone (a probe cut short, its last audits lost to a kill) proves nothing.
    func standing(size: Int, minAgreement: Double) -> Standing {
        if let tally = tally(size: size), Self.fails(tally, minAgreement: minAgreement) { return .failed }
        let proven = tallies.contains {
            $0.size >= size && $0.audited >= Self.proofSamples && $0.agreement >= minAgreement
                && ($0.late ?? 0) > 0
        }
        return proven ? .proven : .unproven
    }

    /// Whether `position` (from 1) is in the last quarter of a prompt of `size` items (the last
    /// place at least).
    static func isLate(position: Int, size: Int) -> Bool {
        position > size - max(1, size / 4)
    }

    /// Whether a size's tally fails it: judged once it has `proofSamples` items, so the order in
    /// which a probe's audits come back does not matter.
    static func fails(_ tally: Tally, minAgreement: Double) -> Bool {
        guard tally.audited >= proofSamples else { return false }
        return tally.interval.upper < minAgreement
            || (tally.audited >= judgedSamples && tally.agreement < minAgreement)
    }

    /// Folds in one audited item, at `position` (from 1) of a prompt of `size` items.
    /// - Returns: the decision it led to, if any.
    @discardableResult
    mutating func record(size: Int, position: Int, agreed: Bool, minAgreement: Double, at now: Date)
        -> Decision?
    {
        updatedAt = now
        // Prompts sent before a cap was set come back after it: already accounted for.
        if let limit = itemLimit(at: now), size > limit { return nil }
        if let at = probeAt, now >= at, let failedSize, size >= failedSize {
            // The first answer of the probe at the failed size: the size is judged anew from here.
            probeAt = nil
            tallies.removeAll { $0.size >= failedSize }
            decide(.probe, size: failedSize, tally: Tally(size: failedSize), cap: cap, at: now)
        }
        let index = tallies.firstIndex { $0.size == size } ?? insertTally(size)
        let wasProven = standing(size: size, minAgreement: minAgreement) == .proven
        tallies[index].audited += 1
        tallies[index].agreed += agreed ? 1 : 0
        if Self.isLate(position: position, size: size) {
            tallies[index].late = (tallies[index].late ?? 0) + 1
        }
        let tally = tallies[index]
        if Self.fails(tally, minAgreement: minAgreement) {
            let halved = max(1, size / 2)
            cap = halved
            failedSize = size
            pauses += 1
            let pause = min(Self.longestPause, Self.firstPause * Double(1 << min(pauses - 1, 10)))
            probeAt = now.addingTimeInterval(pause)
            // Nothing at this size or above is proven now: their next prompts are probes.
            tallies.removeAll { $0.size >= size }
            return decide(halved == 1 ? .off : .halved, size: size, tally: tally, cap: halved, at: now)
        }
        if !wasProven, standing(size: size, minAgreement: minAgreement) == .proven {
            if let failedSize, size >= failedSize {  // the probe held: the cap goes
                self.failedSize = nil
                pauses = 0
                cap = nil
            }
            return decide(.proven, size: size, tally: tally, cap: cap, at: now)
        }
        return nil
    }

    private mutating func insertTally(_ size: Int) -> Int {
        let index = tallies.firstIndex { $0.size > size } ?? tallies.endIndex
        tallies.insert(Tally(size: size), at: index)
        return index
    }

    @discardableResult
    private mutating func decide(_ kind: Decision.Kind, size: Int, tally: Tally, cap: Int?, at now: Date)
        -> Decision
    {
        let decision = Decision(
            at: now, kind: kind, size: size, audited: tally.audited, agreed: tally.agreed, cap: cap)
        decisions.append(decision)
        if decisions.count > Self.decisionsKept {
            decisions.removeFirst(decisions.count - Self.decisionsKept)
        }
        return decision
    }
}
