import Foundation

/// One call's measured duration and size, for the window planner.
struct LatencySample: Sendable {
    /// What it is kept under: its model, and its lane when that is not live (`LatencyEstimate.key`).
    var model: String
    var milliseconds: Double
    /// `output + input / 8`: answer tokens dominate a call's time; reading the prompt is roughly
    /// eight times faster per token.
    var weightedTokens: Double
    var outputTokens: Double

    /// The sample a paid call's ledger row holds.
    init(_ ledger: LedgerEntry) {
        model = LatencyEstimate.key(
            model: ledger.model, lane: ledger.batchApi ? .batch : ledger.flex ? .flex : .live)
        milliseconds = Double(ledger.latencyMs)
        weightedTokens = LatencyEstimate.weightedTokens(
            input: ledger.inputTokens + ledger.cacheReadTokens + ledger.cacheWriteTokens,
            output: ledger.outputTokens)
        outputTokens = Double(ledger.outputTokens)
    }
}

/// How long calls to a model take, smoothed: `model_latency` keeps, per model and lane, an exponentially
/// weighted mean of the whole call (`ms_per_call`) and of the time per weighted token
/// (`ms_per_output_token`, see `LatencySample.weightedTokens`) and of the answer's length.
struct LatencyEstimate: Sendable, Equatable {
    var msPerCall: Double
    var msPerWeightedToken: Double
    /// The model's typical answer, in tokens.
    var outputTokens: Double
    var samples: Int

    /// Weight of the newest sample in the means.
    static let smoothing = 0.3

    /// What a lane's calls to `model` are measured under: the model for live calls, `model#flex`
    /// for flex ones, which may queue at the provider for capacity first and so take longer (the
    /// live lane's window plans and timeouts must not wait for them), and `model#batch` for a
    /// provider batch's (its turnaround, hours).
    static func key(model: String, lane: CallLane) -> String {
        switch lane {
        case .live: model
        case .flex: model + "#flex"
        case .batch: model + "#batch"
        }
    }

    /// Weighted tokens of a call that sends `inputTokens` and may answer up to `outputTokens`.
    static func weightedTokens(input: Int, output: Int) -> Double {
        Double(output) + Double(input) / 8
    }

    /// How long a call sending `input` tokens and answering `output` takes at this model's
    /// measured speed, in seconds: the one answer to "how long will this call take", which the
    /// window planner asks of the expected answer and the call's timeout of the longest allowed.
    func seconds(input: Int, output: Int) -> Double {
        msPerWeightedToken * Self.weightedTokens(input: input, output: output) / 1000
    }

    /// The expected duration of a call sending `input` tokens and allowed `maxOutput`, in seconds:
    /// its answer is taken to be half again as long as the model's typical one, never more than
    /// allowed. What the window planner asks.
    func expectedSeconds(input: Int, maxOutput: Int) -> Double {
        let typical = (outputTokens * 1.5).rounded(.up)
        let output = typical < Double(maxOutput) ? Int(typical) : maxOutput
        return seconds(input: input, output: output)
    }

    /// The longest such a call should take: the model writes the whole `maxOutput`. What the call's
    /// timeout is derived from (`CallTimeout`), so a long answer is not abandoned mid-way.
    func worstSeconds(input: Int, maxOutput: Int) -> Double {
        seconds(input: input, output: maxOutput)
    }
}
