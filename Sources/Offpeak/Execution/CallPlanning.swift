import Foundation

/// How a pass packs its requests into calls, as pure decisions: the run (`RunSession`) and the
/// estimate (`RunEstimator`) both ask these, so an estimate plans exactly what a run would send.
enum CallPlanning {
    /// The structured-output form batched prompts ask for (`StructuredOutput`); nil: plain. `auto`
    /// uses it from the start where the provider says so (OpenAI-compatible servers), elsewhere
    /// only for a model whose plain batched answers lost items, unless the server refused it. The
    /// provider's forms are tried in order (`ProviderCapabilities.Structured`): an OpenAI-compatible
    /// server that refused `json_schema` is asked for `json_object`, and plain once it refused both.
    static func answerForm(
        _ setting: StructuredOutput, provider: ProviderKind, fitness: BatchFitness?, now: Date
    ) -> StructuredForm? {
        let open = firstFormNotRefused(provider: provider, fitness: fitness, now: now)
        switch setting {
        case .off: return nil
        // A server that refused every form gets plain prompts even under `on`: asking again would
        // be refused again, and a refusal costs no attempt, so the items would go round for ever.
        case .on: return open
        case .auto:
            if provider.capabilities.structured.fromTheStart { return open }
            return fitness?.lostPlainAnswers(at: now) == true ? open : nil
        }
    }

    /// The first of the provider's forms the model's server has not refused lately.
    private static func firstFormNotRefused(provider: ProviderKind, fitness: BatchFitness?, now: Date)
        -> StructuredForm?
    {
        provider.capabilities.structured.forms.first { fitness?.refuses($0, at: now) != true }
    }

    /// The planner a pass's calls to `model` are made with. A batch-lane pass packs up to
    /// `BatchLane.mostItems` items a prompt unless the spec sets `batching.max_items`; a model
    /// whose batched answers fare badly gets fewer (`BatchFitness`), and so does one whose batched
    /// answers the audit found changed (`auditLimit`, `AuditRecord`).
    static func batchPlanner(
        spec: JobSpec, model: String, prices: PriceTable, batchLane: Bool, fitness: BatchFitness?,
        auditLimit: Int? = nil, form: StructuredForm?, now: Date
    ) -> BatchPlanner {
        let price = prices.price(for: model)
        var batching = spec.batching
        if batchLane, batching.maxItemsGiven != true { batching.maxItems = BatchLane.mostItems }
        if let limit = fitness?.itemLimit(at: now) { batching.maxItems = min(batching.maxItems, limit) }
        if let limit = auditLimit { batching.maxItems = min(batching.maxItems, limit) }
        var planner = BatchPlanner(
            batching: batching, contextWindow: price?.maxInputTokens ?? 128_000,
            maxOutputTokens: price?.maxOutputTokens ?? 8192, outputWeight: price?.outputWeight ?? 5)
        planner.answerForm = form
        return planner
    }

    /// The most stored requests one round reads and plans: the batch lane's big rounds
    /// (`BatchLane.roundItems`), or a live round of at most `live` requests and at most
    /// `wavesPerRound` times what the provider's `in_flight` calls carry at once.
    ///
    /// A round is also what a pass claims of its run (`LeaseStore.claimRound`): small enough that
    /// hosts working one run share it in many rounds, large enough that the calls in flight rarely
    /// run dry at a round's end (every call of a round comes back before the next is planned).
    static func roundLimit(live: Int, batchLane: Bool, inFlight: Int, batching: JobSpec.Batching) -> Int {
        if batchLane { return max(1, live, BatchLane.roundItems) }
        let perCall = batching.enabled ? max(1, batching.maxItems) : 1
        return max(1, min(live, max(1, inFlight) * perCall * wavesPerRound))
    }

    /// Waves of calls (each as many as may be in flight) a live round holds at most.
    static let wavesPerRound = 16
}
