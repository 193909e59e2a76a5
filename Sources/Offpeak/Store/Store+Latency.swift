import Foundation
import GRDB

/// One call's measured duration and size, for the window planner.
struct LatencySample: Sendable {
    var model: String
    var milliseconds: Double
    /// `output + input / 8`: answer tokens dominate a call's time; reading the prompt is roughly
    /// eight times faster per token.
    var weightedTokens: Double

    /// The sample a paid call's ledger row holds.
    init(_ ledger: LedgerEntry) {
        model = ledger.model
        milliseconds = Double(ledger.latencyMs)
        weightedTokens = LatencyEstimate.weightedTokens(
            input: ledger.inputTokens + ledger.cacheReadTokens + ledger.cacheWriteTokens,
            output: ledger.outputTokens)
    }
}

/// How long calls to a model take, smoothed: `model_latency` keeps, per model, an exponentially
/// weighted mean of the whole call (`ms_per_call`) and of the time per weighted token
/// (`ms_per_output_token`, see `LatencySample.weightedTokens`).
public struct LatencyEstimate: Sendable, Equatable {
    public var msPerCall: Double
    public var msPerWeightedToken: Double
    public var samples: Int

    /// Weight of the newest sample in the means.
    static let smoothing = 0.3

    /// Weighted tokens of a call that sends `inputTokens` and may answer up to `outputTokens`.
    public static func weightedTokens(input: Int, output: Int) -> Double {
        Double(output) + Double(input) / 8
    }

    /// The expected duration of a call of this size, in seconds.
    public func seconds(input: Int, output: Int) -> Double {
        msPerWeightedToken * LatencyEstimate.weightedTokens(input: input, output: output) / 1000
    }
}

extension Store {
    public func latency(model: String) throws(OffpeakError) -> LatencyEstimate? {
        try read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql:
                        "SELECT ms_per_call, ms_per_output_token, samples FROM model_latency WHERE model = ?",
                    arguments: [model])
            else { return nil }
            return LatencyEstimate(
                msPerCall: row["ms_per_call"], msPerWeightedToken: row["ms_per_output_token"],
                samples: row["samples"])
        }
    }

    /// Folds one call into the model's means (inside the call's commit).
    static func record(_ sample: LatencySample, _ db: Database) throws {
        let perToken = sample.milliseconds / max(1, sample.weightedTokens)
        let alpha = LatencyEstimate.smoothing
        try db.execute(
            sql: """
                INSERT INTO model_latency (model, ms_per_call, ms_per_output_token, samples, updated_at)
                VALUES (?, ?, ?, 1, ?)
                ON CONFLICT(model) DO UPDATE SET
                    ms_per_call = ms_per_call * (1 - ?) + excluded.ms_per_call * ?,
                    ms_per_output_token = ms_per_output_token * (1 - ?) + excluded.ms_per_output_token * ?,
                    samples = samples + 1, updated_at = excluded.updated_at
                """,
            arguments: [sample.model, sample.milliseconds, perToken, Date(), alpha, alpha, alpha, alpha])
    }
}
