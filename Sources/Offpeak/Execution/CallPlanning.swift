import Foundation

/// How a pass packs its requests into calls, as pure decisions: the run (`RunSession`) and the
/// estimate (`RunEstimator`) both ask these, so an estimate plans exactly what a run would send.
enum CallPlanning {
    /// Whether batched prompts ask for the structured-output form (`StructuredOutput`): `auto` uses
    /// it on OpenAI-compatible servers, and on Anthropic only for a model whose plain batched
    /// answers lost items, unless the server refused it.
    static func structuredAnswers(
        _ setting: StructuredOutput, provider: ProviderKind, fitness: BatchFitness?, now: Date
    ) -> Bool {
        switch setting {
        case .off: return false
        case .on: return true
        case .auto:
            if fitness?.refusesStructured(at: now) == true { return false }
            switch provider {
            case .openai: return true
            case .anthropic, .sim: return fitness?.lostPlainAnswers(at: now) == true
            }
        }
    }

    /// The planner a pass's calls to `model` are made with. A batch-lane pass packs up to
    /// `BatchLane.mostItems` items a prompt unless the spec sets `batching.max_items`; a model
    /// whose batched answers fare badly gets fewer (`BatchFitness`).
    static func batchPlanner(
        spec: JobSpec, model: String, prices: PriceTable, batchLane: Bool, fitness: BatchFitness?,
        structured: Bool, now: Date
    ) -> BatchPlanner {
        let price = prices.price(for: model)
        var batching = spec.batching
        if batchLane, batching.maxItemsGiven != true { batching.maxItems = BatchLane.mostItems }
        if let limit = fitness?.itemLimit(at: now) { batching.maxItems = min(batching.maxItems, limit) }
        var planner = BatchPlanner(
            batching: batching, contextWindow: price?.maxInputTokens ?? 128_000,
            maxOutputTokens: price?.maxOutputTokens ?? 8192, outputWeight: price?.outputWeight ?? 5)
        planner.structured = structured
        return planner
    }

    /// The most stored requests one round reads and plans: the live default, or the batch lane's
    /// bigger rounds (`BatchLane.roundItems`).
    static func roundLimit(live: Int, batchLane: Bool) -> Int {
        max(1, batchLane ? max(live, BatchLane.roundItems) : live)
    }
}
