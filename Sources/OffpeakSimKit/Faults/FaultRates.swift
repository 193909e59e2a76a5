import Foundation

/// How often each fault hits an API call at random, from `--fault-rate 429=0.1,500=0.05`.
public struct FaultRates: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var fault: SimFault
        public var probability: Double
    }

    /// In the order given, which fixes which fault a random draw lands on.
    public private(set) var entries: [Entry]

    public static let none = FaultRates(entries: [])

    init(entries: [Entry]) {
        self.entries = entries
    }

    /// - Parameter spec: comma-separated `name=probability` pairs; probabilities in 0...1 that
    ///   sum to at most 1; an empty string means no random faults.
    /// - Throws: `SimConfigError.badFaultRate` saying which pair is wrong.
    public init(parsing spec: String) throws {
        var entries: [Entry] = []
        for pair in spec.split(separator: ",") {
            let parts = pair.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                throw SimConfigError(.badFaultRate, "'\(pair)' is not name=probability")
            }
            let fault = try SimFault(name: String(parts[0]))
            let text = parts[1].trimmingCharacters(in: .whitespaces)
            guard let probability = Double(text), (0...1).contains(probability) else {
                throw SimConfigError(.badFaultRate, "'\(pair)': probability must be a number in 0...1")
            }
            guard !entries.contains(where: { $0.fault == fault }) else {
                throw SimConfigError(.badFaultRate, "fault '\(fault.rawValue)' is given twice")
            }
            entries.append(Entry(fault: fault, probability: probability))
        }
        let total = entries.reduce(0) { $0 + $1.probability }
        guard total <= 1 + 1e-9 else {
            throw SimConfigError(.badFaultRate, "probabilities sum to \(total), more than 1")
        }
        self.entries = entries
    }

    /// The fault a uniform draw in `0..<1` lands on, each taking a slice as wide as its
    /// probability; nil for the rest of the interval.
    public func fault(forDraw draw: Double) -> SimFault? {
        var upper = 0.0
        for entry in entries {
            upper += entry.probability
            if draw < upper { return entry.fault }
        }
        return nil
    }
}
