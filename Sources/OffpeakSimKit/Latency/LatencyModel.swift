/// How long the sim takes to answer: a fixed part (time to first token), time per output token
/// (generation speed), and jitter around their sum, as a real model's latency varies.
///
/// A call's delay is `(fixedMs + msPerOutputToken × outputTokens) × (1 + jitter × u)` with `u`
/// uniform in `[-1, 1)`: the mean is the sum without jitter, every delay lies within
/// `± jitter` of it, and its standard deviation is `jitter / √3` of it. With `jitter` 0 every
/// delay is exactly the sum, as `--latency-ms` and `--ms-per-output-token` always meant.
public struct LatencyModel: Sendable, Equatable {
    /// `--latency-ms`: before every answer.
    public var fixedMs: Double
    /// `--ms-per-output-token`: per billed output token of the answer.
    public var msPerOutputToken: Double
    /// `--jitter`: in `0...1`, the most a delay strays from the mean, as a fraction of it.
    public var jitter: Double

    public init(fixedMs: Double = 0, msPerOutputToken: Double = 0, jitter: Double = 0) {
        self.fixedMs = fixedMs
        self.msPerOutputToken = msPerOutputToken
        self.jitter = jitter
    }

    /// The mean delay of an answer with `outputTokens` tokens, in milliseconds.
    public func meanMilliseconds(outputTokens: Int) -> Double {
        fixedMs + msPerOutputToken * Double(max(0, outputTokens))
    }

    /// The delay for one answer, given a uniform `draw` in `0..<1` (ignored without jitter).
    public func milliseconds(outputTokens: Int, draw: Double) -> Double {
        let mean = meanMilliseconds(outputTokens: outputTokens)
        return max(0, mean * (1 + jitter * (2 * draw - 1)))
    }

    /// Whether an answer's delay needs a random draw at all.
    var isRandom: Bool { jitter > 0 }
}
