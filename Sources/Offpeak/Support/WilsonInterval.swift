import Foundation

/// The Wilson score interval of a share seen in a sample: where the true share lies, at about 95 %
/// confidence, after `successes` of `trials` (Wilson, 1927). Unlike the normal approximation it
/// stays inside 0...1 and says something useful for the handful of trials an audit has early on:
/// 4 of 4 gives 0.51...1, 2 of 4 gives 0.15...0.85.
struct WilsonInterval: Sendable, Equatable, Codable {
    var lower: Double
    var upper: Double

    /// z for a two-sided 95 % interval.
    static let z95 = 1.959964

    /// The interval after `successes` of `trials`; 0...1 (nothing known) for no trials.
    init(successes: Int, trials: Int, z: Double = z95) {
        guard trials > 0 else {
            (lower, upper) = (0, 1)
            return
        }
        let n = Double(trials)
        let p = Double(min(max(0, successes), trials)) / n
        let z2 = z * z
        let center = (p + z2 / (2 * n)) / (1 + z2 / n)
        let half = z / (1 + z2 / n) * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        lower = max(0, center - half)
        upper = min(1, center + half)
    }
}
