import Foundation
import Testing

@testable import OffpeakSimKit

/// The latency model: a fixed part plus time per output token, with seeded jitter. The model is
/// tested by its draws, never by sleeping.
struct SimLatencyTests {
    let model = LatencyModel(fixedMs: 400, msPerOutputToken: 8, jitter: 0.2)

    private func draws(_ sampler: LatencySampler, count: Int, outputTokens: Int = 100) -> [Double] {
        (0..<count).map { _ in sampler.nextMilliseconds(outputTokens: outputTokens) }
    }

    @Test func meanIsTheFixedPartPlusTimePerOutputToken() {
        #expect(model.meanMilliseconds(outputTokens: 100) == 1200)
        #expect(model.meanMilliseconds(outputTokens: 0) == 400)
        #expect(model.milliseconds(outputTokens: 100, draw: 0) == 960)
        #expect(model.milliseconds(outputTokens: 100, draw: 0.5) == 1200)
        #expect(model.milliseconds(outputTokens: 100, draw: 0.75) == 1320)
    }

    @Test func withoutJitterEveryDelayIsExact() {
        let exact = LatencySampler(model: LatencyModel(fixedMs: 50, msPerOutputToken: 2), seed: 1)
        #expect(Set(draws(exact, count: 100, outputTokens: 10)) == [70])
        #expect(SimOptions().latency == LatencyModel(), "no latency unless asked")
    }

    @Test func theSameSeedGivesTheSameDelaysAndResetReplaysThem() {
        let first = LatencySampler(model: model, seed: 42)
        let run = draws(first, count: 200)
        #expect(draws(LatencySampler(model: model, seed: 42), count: 200) == run)
        #expect(draws(LatencySampler(model: model, seed: 43), count: 200) != run)
        first.reset()
        #expect(draws(first, count: 200) == run)
    }

    @Test func theLatencySequenceIsNotTheFaultSequence() {
        // Seeded from the same --seed, the two sequences must not be the same numbers, or every
        // faulted call would also be the slowest (or fastest) one.
        var faults = SplitMix64(seed: 7)
        let faultDraws = (0..<20).map { _ in faults.nextUnitDouble() }
        let sampler = LatencySampler(model: LatencyModel(fixedMs: 1000, jitter: 1), seed: 7)
        // With jitter 1 around 1,000 ms a delay is 2,000 × u: the draw itself.
        let latencyDraws = draws(sampler, count: 20, outputTokens: 0).map { $0 / 2000 }
        #expect(zip(faultDraws, latencyDraws).allSatisfy { abs($0 - $1) > 1e-9 })
    }

    @Test func manyDrawsHaveTheConfiguredMeanAndSpread() {
        let sampler = LatencySampler(model: model, seed: 2026)
        let delays = draws(sampler, count: 20_000)
        let mean = delays.reduce(0, +) / Double(delays.count)
        let variance = delays.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(delays.count - 1)
        let deviation = variance.squareRoot()
        // Uniform within ±20 % of 1,200 ms: mean 1,200, standard deviation 240/√3 = 138.6 ms.
        #expect(abs(mean - 1200) < 5, "mean \(mean)")
        #expect(abs(deviation - 240 / 3.0.squareRoot()) < 3, "standard deviation \(deviation)")
        #expect(delays.allSatisfy { (960..<1440).contains($0) })
        #expect(delays.min().map { $0 < 965 } == true, "the draws reach the edges of the range")
        #expect(delays.max().map { $0 > 1435 } == true)
    }

    @Test func optionsRejectJitterOutsideZeroToOneAndLimitsBelowOne() {
        var options = SimOptions()
        options.jitter = 1.5
        #expect(throws: SimConfigError(.badOption, "--jitter must be in 0...1")) { try options.validate() }
        options.jitter = 1
        #expect(throws: Never.self) { try options.validate() }
        options.rateLimits = RateLimits(requestsPerMinute: 50, outputTokensPerMinute: 0)
        #expect(throws: SimConfigError(.badOption, "--output-tpm must be at least 1")) {
            try options.validate()
        }
    }
}
