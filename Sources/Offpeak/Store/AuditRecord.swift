import Foundation

/// What the batch audit has learned of one job's batched prompts to one model (`audit_records`,
/// one row per job, provider and model): per batch size, the evidence of the items also asked
/// alone (`AuditEvidence`), and what it decided.
///
/// A batched answer can keep its shape and lose its content, and it does so more the later an item
/// sits in its prompt. Each size is judged by a sequential test (`SequentialTest`) on the audits at
/// its prompts' tail, against the job's target agreement:
/// - **holds** once the test shows the tail agrees often enough; a smaller size than one that holds
///   holds too (answers degrade as prompts grow);
/// - **fails** once it shows the tail does not: prompts then carry at most half as many items, down
///   to one (batching off for the job and model), and the failed size is probed again after a pause
///   that doubles with each failed probe;
/// - is **doubted** (unproven again) when a size that held sees its evidence turn.
///
/// Evidence carries across runs and hosts (the record is read and changed in the transaction of
/// each audit), for the same prompt shape and target: a job whose prompt or target changed starts
/// over (`matches`).
struct AuditRecord: Sendable, Equatable, Codable {
    var job: String
    var provider: String
    var model: String
    /// The prompt shape (`JobSpec.auditShape`) and the target agreement the evidence was gathered
    /// under; nil: written before they were kept.
    var shape: String?
    var target: Double?
    /// Each batch size's evidence, since the size was last judged anew, smallest size first.
    var sizes: [AuditEvidence] = []
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

    /// A change the audit made to how the job's items are packed.
    struct Decision: Sendable, Equatable, Codable {
        enum Kind: String, Sendable, Codable {
            /// The size's tail agrees often enough: it is used without probing.
            case proven
            /// The size's tail disagrees too often: prompts carry at most `cap` items.
            case halved
            /// Even two items a prompt disagree too often: the job's items go alone.
            case off
            /// The pause after a failure is over: the failed size is tried again.
            case probe
            /// A size that held saw its evidence turn: its prompts are probed again.
            case doubted
            /// The audit's proving share ran out before the size was shown to hold, with its
            /// evidence leaning to changed answers: prompts carry at most `cap` items.
            case backedOff
        }
        var at: Date
        var kind: Kind
        var size: Int
        /// The tail's audited items and those that agreed, when it was decided (rounded).
        var audited: Int
        var agreed: Int
        /// The cap it left; nil: none.
        var cap: Int?
    }

    static let firstPause: TimeInterval = 24 * 3600
    static let longestPause: TimeInterval = 7 * 24 * 3600
    static let decisionsKept = 20

    init(job: String, provider: String, model: String, at now: Date) {
        self.job = job
        self.provider = provider
        self.model = model
        self.updatedAt = now
    }

    /// Whether the model's answers have changed with the prompt's size (a cap stands): its
    /// smaller sizes are then proven with more confidence (`SequentialTest`, `watched`), and the
    /// run samples them more (`AuditSampling`).
    var watched: Bool { cap != nil }

    /// The test the record's sizes are judged by: against its target, watched or not.
    var test: SequentialTest {
        SequentialTest(agree: target ?? JobSpec.Audit.defaultAgree, watched: watched)
    }

    /// Whether the evidence was gathered for prompts of `shape` against `target`.
    func matches(shape: String, target: Double) -> Bool {
        self.shape == shape && self.target == target
    }

    /// The most items one prompt may carry at `now`; nil: what the job allows. A pause over, the
    /// failed size is tried again, and stays allowed while its probe is being judged.
    func itemLimit(at now: Date) -> Int? {
        if let failedSize, probeAt.map({ now >= $0 }) ?? true { return failedSize }
        return cap
    }

    /// `size`'s evidence as it stands at `now`; nil before its first audit.
    func evidence(size: Int, at now: Date) -> AuditEvidence? {
        sizes.first { $0.size == size }?.faded(to: now)
    }

    /// Whether prompts of `size` items hold at `now`: the size, or a larger one, was shown to.
    func holds(size: Int, at now: Date) -> Bool {
        sizes.contains { $0.size >= size && $0.holds(at: now) }
    }

    /// Agreeing tail audits in a row that would prove `size` at `now` (0: it holds).
    func agreementsToProve(size: Int, at now: Date) -> Int {
        guard !holds(size: size, at: now) else { return 0 }
        return test.agreementsToProve(from: evidence(size: size, at: now)?.evidence ?? 0)
    }

    /// How the job's batched answers stand: judged at the largest size the audit has evidence of
    /// within the item limit (the size the job's prompts carry now).
    enum Standing: Sendable, Equatable {
        case holds(size: Int)
        /// Not yet shown either way: `agreements` agreeing tail audits in a row would prove it.
        case unproven(size: Int, agreements: Int)
        /// Not failed yet, but its evidence leans to changed answers: the tail's audits so far.
        case belowTarget(size: Int, audited: Int, agreed: Int)

        /// `holds`, `unproven` or `below_target`, as `--json` names it.
        var name: String {
            switch self {
            case .holds: "holds"
            case .unproven: "unproven"
            case .belowTarget: "below_target"
            }
        }

        var size: Int {
            switch self {
            case .holds(let size), .unproven(let size, _), .belowTarget(let size, _, _): size
            }
        }

        /// For an unproven size: agreeing tail audits in a row that would show it holds.
        var agreementsToProve: Int? {
            if case .unproven(_, let agreements) = self { return agreements }
            return nil
        }
    }

    /// The standing at `now` of the largest size with evidence within the item limit; nil before
    /// any evidence (or when it was gathered for another prompt).
    func standing(at now: Date) -> Standing? {
        let limit = itemLimit(at: now)
        guard let largest = sizes.last(where: { limit == nil || $0.size <= limit ?? 0 }) else { return nil }
        return standing(size: largest.size, at: now)
    }

    /// How prompts of `size` items stand at `now` (unproven with no evidence of their own).
    func standing(size: Int, at now: Date) -> Standing {
        if holds(size: size, at: now) { return .holds(size: size) }
        let evidence = evidence(size: size, at: now) ?? AuditEvidence(size: size, at: now)
        guard evidence.evidence <= 0 else {
            let tail = evidence.tail
            return .belowTarget(
                size: size, audited: Int(tail.audited.rounded()), agreed: Int(tail.agreed.rounded()))
        }
        return .unproven(size: size, agreements: test.agreementsToProve(from: evidence.evidence))
    }

    /// Folds in one audited item, at `position` (from 1) of a prompt of `size` items, judged by
    /// `test`. Evidence gathered for another prompt shape or target is set aside first.
    /// - Returns: the decision it led to, if any.
    @discardableResult
    mutating func record(
        size: Int, position: Int, agreed: Bool, shape: String, target: Double, at now: Date
    ) -> Decision? {
        adopt(shape: shape, target: target)
        updatedAt = now
        // Prompts sent before a cap was set come back after it: already accounted for.
        if let limit = itemLimit(at: now), size > limit { return nil }
        if let at = probeAt, now >= at, let failedSize, size >= failedSize {
            // The first answer of the probe at the failed size: the size is judged anew from here.
            probeAt = nil
            sizes.removeAll { $0.size >= failedSize }
            decide(.probe, AuditEvidence(size: failedSize, at: now), cap: cap, at: now)
        }
        let test = test
        let index = sizes.firstIndex { $0.size == size } ?? insert(size, at: now)
        sizes[index] = sizes[index].faded(to: now)
        sizes[index].add(position: position, agreed: agreed, test: test)
        let evidence = sizes[index]
        guard AuditEvidence.isTail(position: position, size: size) else { return nil }
        switch test.verdict(evidence.evidence) {
        case .fails:
            return backOff(size: size, kind: nil, at: now)
        case .holds where !evidence.holds:
            sizes[index].holds = true
            if let failedSize, size >= failedSize {  // the probe held: the cap goes
                self.failedSize = nil
                pauses = 0
                cap = nil
            }
            return decide(.proven, evidence, cap: cap, at: now)
        case .undecided where evidence.holds && evidence.evidence >= 0:
            sizes[index].holds = false
            return decide(.doubted, evidence, cap: cap, at: now)
        default:
            return nil
        }
    }

    /// Prompts of `size` items and more go out of use: at most half as many items a prompt (one:
    /// batching off), `size` probed again after a pause. `kind` says why (nil: the test failed it).
    @discardableResult
    mutating func backOff(size: Int, kind: Decision.Kind?, at now: Date) -> Decision {
        updatedAt = now
        let evidence = sizes.first { $0.size == size }?.faded(to: now) ?? AuditEvidence(size: size, at: now)
        let halved = max(1, size / 2)
        cap = min(cap ?? halved, halved)
        failedSize = size
        pauses += 1
        let pause = min(Self.longestPause, Self.firstPause * Double(1 << min(pauses - 1, 10)))
        probeAt = now.addingTimeInterval(pause)
        // Nothing at this size or above holds now: their next prompts are probes.
        sizes.removeAll { $0.size >= size }
        return decide(kind ?? (halved == 1 ? .off : .halved), evidence, cap: halved, at: now)
    }

    /// Makes the record one of prompts of `shape` judged against `target`: what was learned of
    /// another shape or target is set aside (the decisions stay, as history).
    mutating func adopt(shape: String, target: Double) {
        guard !matches(shape: shape, target: target) else { return }
        self.shape = shape
        self.target = target
        sizes = []
        cap = nil
        failedSize = nil
        probeAt = nil
        pauses = 0
    }

    private mutating func insert(_ size: Int, at now: Date) -> Int {
        let index = sizes.firstIndex { $0.size > size } ?? sizes.endIndex
        sizes.insert(AuditEvidence(size: size, at: now), at: index)
        return index
    }

    @discardableResult
    private mutating func decide(_ kind: Decision.Kind, _ evidence: AuditEvidence, cap: Int?, at now: Date)
        -> Decision
    {
        let tail = evidence.tail
        let decision = Decision(
            at: now, kind: kind, size: evidence.size, audited: Int(tail.audited.rounded()),
            agreed: Int(tail.agreed.rounded()), cap: cap)
        decisions.append(decision)
        if decisions.count > Self.decisionsKept {
            decisions.removeFirst(decisions.count - Self.decisionsKept)
        }
        return decision
    }
}

extension AuditRecord {
    private enum CodingKeys: String, CodingKey {
        case job, provider, model, shape, target, sizes, cap, failedSize, probeAt, pauses, decisions,
            updatedAt
    }

    /// A record written before the sequential test (per-size `tallies`, no shape or target) decodes
    /// with its decisions as history; its shape unknown, the job's audit starts over.
    init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        job = try values.decode(String.self, forKey: .job)
        provider = try values.decode(String.self, forKey: .provider)
        model = try values.decode(String.self, forKey: .model)
        shape = try values.decodeIfPresent(String.self, forKey: .shape)
        target = try values.decodeIfPresent(Double.self, forKey: .target)
        sizes = try values.decodeIfPresent([AuditEvidence].self, forKey: .sizes) ?? []
        cap = try values.decodeIfPresent(Int.self, forKey: .cap)
        failedSize = try values.decodeIfPresent(Int.self, forKey: .failedSize)
        probeAt = try values.decodeIfPresent(Date.self, forKey: .probeAt)
        pauses = try values.decodeIfPresent(Int.self, forKey: .pauses) ?? 0
        decisions = try values.decodeIfPresent([Decision].self, forKey: .decisions) ?? []
        updatedAt = try values.decode(Date.self, forKey: .updatedAt)
    }
}
