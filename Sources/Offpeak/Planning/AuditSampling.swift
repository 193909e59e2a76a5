import Foundation

/// A batched item asked again alone, to check its batched answer (`AuditRecord`): the call it was
/// answered in, its place there, and what that answer said.
struct AuditTarget: Sendable, Equatable {
    /// Items in the batched prompt, and this item's place in it, from 1.
    var size: Int
    var position: Int
    var batchedAnswer: String
}

/// Which items of a batched prompt the audit also asks alone.
///
/// A batch size not yet proven for the job and model is probed: its first prompt is audited at
/// `probeItems` places spread from the first item to the last (answers degrade with position,
/// so the last places matter most), and later probes of the same size look between them. A
/// proven size is sampled: each item falls in the sample by a hash of its request id, so the
/// sample is spread over positions and a pass that resumes draws the same items.
enum AuditSampling {
    /// Items a probe audits (fewer when the prompt is smaller).
    static let probeItems = 4

    /// The places (from 0) a probe of a `size`-item prompt audits; `round` counts the probes of
    /// that size before it.
    static func probePositions(size: Int, round: Int) -> [Int] {
        guard size > 0 else { return [] }
        let count = min(size, probeItems)
        guard count < size else { return Array(0..<size) }
        // Evenly from first to last; each later probe shifted by a share of the gap between them.
        let gap = Double(size - 1) / Double(max(1, count - 1))
        let shift = round == 0 ? 0 : Double(round) * gap / Double(probeItems)
        var positions: [Int] = []
        for index in 0..<count {
            let place = (Double(index) * gap + shift).rounded(.down)
            var position = Int(place) % size
            while positions.contains(position) { position = (position + 1) % size }
            positions.append(position)
        }
        return positions.sorted()
    }

    /// Whether the item of `requestID` falls in a sample of `rate` (0...1): the first 8 bytes of
    /// the SHA-256 of its id, as a share of 2^64.
    static func sampled(_ requestID: String, rate: Double) -> Bool {
        guard rate > 0 else { return false }
        guard rate < 1 else { return true }
        let digest = SHA256.hex("audit:" + requestID)
        guard let value = UInt64(digest.prefix(16), radix: 16) else { return false }
        return Double(value) / 18_446_744_073_709_551_616.0 < rate
    }
}
