import Foundation
import Logging

/// How long one live call may take before it is abandoned.
///
/// `http.timeout` suits a fast API, not a slow model writing a long (batched) answer: abandoned
/// while still writing, the call is retried from the start, and a server that answers one call at
/// a time first finishes the abandoned one, doubling the wait, while a paid API bills both. So a
/// call to a model whose speed is measured (`LatencyEstimate`) gets the time its worst case takes
/// at that speed (the whole `max_tokens` written, `LatencyEstimate.worstSeconds`: the same
/// estimate the window planner asks for the expected case), with a margin for a slower moment and
/// the time to connect; never less than `http.timeout`, which is all a model not measured yet gets.
struct CallTimeout: Sendable, Equatable {
    /// `http.timeout`: the least a call gets, and all it gets before its model is measured.
    var floor: TimeInterval
    /// `http.connect_timeout`: connecting may take this long before the model starts.
    var connect: TimeInterval

    /// How much slower than measured a model may write before its call is abandoned.
    static let margin = 1.5
    /// The longest timeout any call gets, whatever its model's speed says (a day).
    static let longest: TimeInterval = 86_400

    /// A call's timeout when its model's speed asks for more than `floor`, and why.
    struct Raised: Sendable, Equatable {
        var seconds: TimeInterval
        /// What `--verbose` logs: the model's speed and the tokens asked.
        var why: String
    }

    /// The timeout of a call to `model` sending `inputTokens` and allowed `maxOutput`, when it must
    /// be longer than `floor`; nil: `floor` will do (or `speed` is nil: not measured yet).
    func raised(model: String, inputTokens: Int, maxOutput: Int, speed: LatencyEstimate?) -> Raised? {
        guard let speed else { return nil }
        let worst = speed.worstSeconds(input: inputTokens, maxOutput: maxOutput)
        guard worst.isFinite else { return nil }
        let needed = min(Self.longest, (worst * Self.margin + connect).rounded(.up))
        guard needed > floor else { return nil }
        return Raised(
            seconds: needed,
            why:
                "call to \(model) may take \(Self.text(needed)) s, over http.timeout's \(Self.text(floor)) s: "
                + "at its measured \(Self.text(speed.msPerWeightedToken)) ms per token, it sends \(inputTokens) "
                + "tokens and may write up to \(maxOutput), \(Self.text(worst)) s at most, "
                + "x\(Self.text(Self.margin)) plus \(Self.text(connect)) s to connect")
    }

    /// `value` with at most one decimal, none when whole.
    private static func text(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return String(format: tenths == tenths.rounded() ? "%.0f" : "%.1f", tenths)
    }
}

extension RunContext {
    /// The timeout of `request`'s call in `lane` (nil: `http.timeout`), logged at debug
    /// (`--verbose`) when its model's measured speed raises it. A flex call gets at least what the
    /// provider's guide advises (`FlexProcessing.timeout`): it may queue for capacity first.
    func timeout(for request: CompletionRequest, inputTokens: Int, lane: CallLane = .live)
        throws(OffpeakError)
        -> TimeInterval?
    {
        let raised = callTimeout.raised(
            model: request.model, inputTokens: inputTokens, maxOutput: request.maxTokens,
            speed: try latency(of: request.model, lane: lane))
        if let raised { logger.debug("\(raised.why)") }
        guard lane == .flex, let flex = provider.capabilities.flex else { return raised?.seconds }
        return max(raised?.seconds ?? callTimeout.floor, flex.timeout)
    }
}
