import Foundation

/// The ledger's reads that both engines make alike, written once (`SQLEngine`).
extension LedgerStore where Self: SQLEngine {
    func latency(model: String) throws(OffpeakError) -> LatencyEstimate? {
        try rows(
            """
            SELECT ms_per_call, ms_per_output_token, output_tokens, samples FROM model_latency
            WHERE model = \(model)
            """
        ).first.map { row throws(OffpeakError) -> LatencyEstimate in
            LatencyEstimate(
                msPerCall: try row("ms_per_call"), msPerWeightedToken: try row("ms_per_output_token"),
                outputTokens: try row("output_tokens"), samples: try row("samples"))
        }
    }
}
