import Foundation

/// What the batch audit knows of one batch size of a job's prompts to a model (`AuditRecord`):
/// the sequential test's evidence over the audits at the prompts' tail, whether it holds, and
/// every audited place's tally.
///
/// Answers degrade with their place in a prompt, so the tail (`isTail`: its last quarter, the
/// last place at least) is where a size is judged: if the tail's answers agree often enough,
/// those before it do too. The head's audits are kept to compare, not judged.
///
/// Evidence fades: its weight halves every `halfLife`, and a size not audited for `maxAge` is
/// proven again before it is trusted, so a model that changes behind its name is noticed.
struct AuditEvidence: Sendable, Equatable, Codable {
    var size: Int
    /// The sequential test's statistic over the tail's audits (`SequentialTest`), as of `at`.
    var evidence: Double = 0
    /// Shown to hold, and not doubted since (the evidence back at 0 or above).
    var holds = false
    /// Audited items by place in the prompt, weighted as the evidence fades.
    var places: [Place] = []
    /// When the size was last audited.
    var at: Date

    /// One place's audited items (place from 1).
    struct Place: Sendable, Equatable, Codable {
        var position: Int
        var audited: Double
        var agreed: Double
    }

    static let halfLife: TimeInterval = 7 * 24 * 3600
    static let maxAge: TimeInterval = 14 * 24 * 3600

    init(size: Int, at now: Date) {
        self.size = size
        self.at = now
    }

    /// Whether `position` (from 1) is in the tail of a prompt of `size` items: its last quarter,
    /// the last place at least.
    static func isTail(position: Int, size: Int) -> Bool {
        position > size - max(1, size / 4)
    }

    /// Whether `position` is the head's: the first quarter, the first place at least, outside the tail.
    static func isHead(position: Int, size: Int) -> Bool {
        position <= max(1, size / 4) && !isTail(position: position, size: size)
    }

    /// This evidence as it stands at `now`: weights faded by the time since `at`.
    func faded(to now: Date) -> AuditEvidence {
        let elapsed = now.timeIntervalSince(at)
        guard elapsed > 0 else { return self }
        let factor = pow(0.5, elapsed / Self.halfLife)
        var faded = self
        faded.evidence *= factor
        faded.places = places.map {
            Place(position: $0.position, audited: $0.audited * factor, agreed: $0.agreed * factor)
        }
        faded.at = now
        return faded
    }

    /// Whether the size holds at `now`: proven, not doubted since, and audited within `maxAge`.
    func holds(at now: Date) -> Bool {
        holds && now.timeIntervalSince(at) < Self.maxAge && faded(to: now).evidence < 0
    }

    /// Folds in one audited item at `position`; the test moves on a tail's only.
    mutating func add(position: Int, agreed: Bool, test: SequentialTest) {
        if let index = places.firstIndex(where: { $0.position == position }) {
            places[index].audited += 1
            places[index].agreed += agreed ? 1 : 0
        } else {
            let index = places.firstIndex { $0.position > position } ?? places.endIndex
            places.insert(Place(position: position, audited: 1, agreed: agreed ? 1 : 0), at: index)
        }
        if Self.isTail(position: position, size: size) {
            evidence = test.next(evidence, agreed: agreed)
        }
    }

    /// The tail's audited items and those that agreed (weighted).
    var tail: (audited: Double, agreed: Double) { sum { Self.isTail(position: $0, size: size) } }
    /// The head's.
    var head: (audited: Double, agreed: Double) { sum { Self.isHead(position: $0, size: size) } }

    private func sum(_ included: (Int) -> Bool) -> (audited: Double, agreed: Double) {
        places.filter { included($0.position) }.reduce((0, 0)) { ($0.0 + $1.audited, $0.1 + $1.agreed) }
    }
}
