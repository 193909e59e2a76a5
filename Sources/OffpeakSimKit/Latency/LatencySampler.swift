import Synchronization

/// Draws each answer's delay from a `LatencyModel` with its own seeded sequence, so `--seed`
/// makes the delays repeatable without moving the fault and damage sequences (which keep
/// theirs): the n-th jittered answer always gets the n-th draw.
final class LatencySampler: Sendable {
    /// Mixed into the seed so the latency sequence is not the fault sequence's twin.
    private static let streamSalt: UInt64 = 0x6C61_7465_6E63_7921

    let model: LatencyModel
    private let seed: UInt64
    private let random: Mutex<SplitMix64>

    init(model: LatencyModel, seed: UInt64) {
        self.model = model
        self.seed = seed ^ Self.streamSalt
        self.random = Mutex(SplitMix64(seed: seed ^ Self.streamSalt))
    }

    /// The delay for the next answer, in milliseconds. No draw is taken without jitter.
    func nextMilliseconds(outputTokens: Int) -> Double {
        guard model.isRandom else { return model.meanMilliseconds(outputTokens: outputTokens) }
        let draw = random.withLock { $0.nextUnitDouble() }
        return model.milliseconds(outputTokens: outputTokens, draw: draw)
    }

    /// Restarts the sequence from the seed (`POST /sim/reset`).
    func reset() {
        random.withLock { $0 = SplitMix64(seed: seed) }
    }
}
