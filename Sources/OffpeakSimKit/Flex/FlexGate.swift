import Synchronization

/// OpenAI's flex processing as the sim plays it (`service_tier: "flex"` on chat completions):
/// some calls are refused for want of capacity (a 429 `resource_unavailable`, not billed, as
/// OpenAI answers), and those answered take `slowdown` times as long as a live call.
///
/// The refusals are drawn from their own sequence under `--seed`, so flex calls leave the fault
/// and latency sequences of other calls as they were.
final class FlexGate: Sendable {
    private let refuseRate: Double
    private let asDefaultRate: Double
    let slowdown: Double
    private let seed: UInt64
    private let random: Mutex<SplitMix64>

    /// What the refusal says, in the words OpenAI's guide uses for it.
    static let refusal =
        "Resource Unavailable: flex processing has no capacity for this request right now; "
        + "retry later or send it without service_tier flex"

    init(refuseRate: Double, asDefaultRate: Double = 0, slowdown: Double, seed: UInt64) {
        self.refuseRate = refuseRate
        self.asDefaultRate = asDefaultRate
        self.slowdown = slowdown
        self.seed = seed ^ 0x666C_6578  // "flex"
        self.random = Mutex(SplitMix64(seed: self.seed))
    }

    /// Whether the next flex call is refused.
    func refuses() -> Bool {
        guard refuseRate > 0 else { return false }
        return random.withLock { $0.nextUnitDouble() } < refuseRate
    }

    /// Whether the next flex call taken is answered at the default tier (drawn from the same
    /// sequence, only when the rate is set, so the refusals stay as they were without it).
    func answersAsDefault() -> Bool {
        guard asDefaultRate > 0 else { return false }
        return random.withLock { $0.nextUnitDouble() } < asDefaultRate
    }

    /// `POST /sim/reset`: the refusal sequence from its start.
    func reset() {
        random.withLock { $0 = SplitMix64(seed: seed) }
    }
}
