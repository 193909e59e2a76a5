/// How often, and how, the sim damages batched answers: `--damage-rate` and `--damage`.
///
/// Models answering many items in one prompt sometimes drop an item, repeat one, mangle its
/// value, shuffle the order or wrap the JSON in prose (Lin et al.). A client that batches must
/// survive all of that, so the sim can do each of them on purpose.
public struct DamagePolicy: Sendable, Equatable {
    /// One way a batched answer can be damaged, named as `--damage` and `/sim/stats` spell it.
    public enum Kind: String, CaseIterable, Sendable, Codable {
        /// The item is left out of the object.
        case drop
        /// The item's key is written twice, the second time with a wrong answer.
        case duplicate
        /// The item's value is `null`, a number or an empty string instead of its answer.
        case garble
        /// The whole object is wrapped in prose or a markdown code fence (once per answer).
        case wrap
        /// The item is moved to another position in the object.
        case reorder

        /// Every kind name, comma-separated: the default of `--damage` and its error messages.
        public static var allNames: String { allCases.map(\.rawValue).joined(separator: ",") }
    }

    /// The chance, in 0...1, that each item of a batched answer is damaged.
    public private(set) var rate: Double
    /// The kinds a damaged item draws from, with equal chance; never empty.
    public private(set) var kinds: [Kind]

    /// Batched answers are left whole: the default.
    public static let none = DamagePolicy(checkedRate: 0, kinds: Kind.allCases)

    private init(checkedRate: Double, kinds: [Kind]) {
        self.rate = checkedRate
        self.kinds = kinds
    }

    /// - Parameters:
    ///   - rate: the per-item chance of damage, in 0...1.
    ///   - kinds: the kinds to draw from, in the order given.
    /// - Throws: `SimConfigError.badOption` for a rate out of range or no kinds.
    public init(rate: Double, kinds: [Kind]) throws {
        guard rate.isFinite, (0...1).contains(rate) else {
            throw SimConfigError(.badOption, "--damage-rate must be a number in 0...1")
        }
        guard !kinds.isEmpty else {
            throw SimConfigError(.badOption, "--damage must name at least one of \(Kind.allNames)")
        }
        self.init(checkedRate: rate, kinds: kinds)
    }

    /// - Parameter spec: comma-separated kind names, e.g. `drop,garble`; a kind named twice
    ///   counts once, so each named kind keeps an equal chance.
    /// - Throws: `SimConfigError.badOption` naming an unknown kind.
    public init(rate: Double, parsing spec: String) throws {
        var kinds: [Kind] = []
        for name in spec.split(separator: ",") {
            let key = name.filter { !$0.isWhitespace }.lowercased()
            guard let kind = Kind(rawValue: key) else {
                throw SimConfigError(
                    .badOption, "--damage: unknown kind '\(name)'; expected some of \(Kind.allNames)")
            }
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        try self.init(rate: rate, kinds: kinds)
    }

    /// Whether any answer can be damaged at all; when not, no random draw is taken.
    public var isActive: Bool { rate > 0 }
}
