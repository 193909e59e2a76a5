import Foundation
import GRDB

extension SQLiteStore {
    /// Folds one call into the model's means (inside the call's commit).
    static func record(_ sample: LatencySample, _ db: Database) throws {
        let perToken = sample.milliseconds / max(1, sample.weightedTokens)
        let alpha = LatencyEstimate.smoothing
        try db.execute(
            sql: """
                INSERT INTO model_latency (model, ms_per_call, ms_per_output_token, output_tokens, samples,
                updated_at)
                VALUES (:model, :ms, :perToken, :output, 1, :now)
                ON CONFLICT(model) DO UPDATE SET
                    ms_per_call = ms_per_call * (1 - :alpha) + excluded.ms_per_call * :alpha,
                    ms_per_output_token = ms_per_output_token * (1 - :alpha) + excluded.ms_per_output_token * :alpha,
                    output_tokens = output_tokens * (1 - :alpha) + excluded.output_tokens * :alpha,
                    samples = samples + 1, updated_at = excluded.updated_at
                """,
            arguments: [
                "model": sample.model, "ms": sample.milliseconds, "perToken": perToken,
                "output": sample.outputTokens,
                "now": Date(), "alpha": alpha,
            ])
    }
}
