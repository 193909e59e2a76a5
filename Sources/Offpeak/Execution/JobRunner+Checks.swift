import Foundation

/// What a run checks before it starts, and what it tells the user about the unfinished run it
/// resumes: no pending item leaves a run without the user hearing of it.
extension JobRunner {
    /// Whether the job's unfinished run has provider batches out.
    func hasBatchesOut(job: String) throws(OffpeakError) -> Bool {
        guard let run = try store.runs.latestResumableRun(job: job) else { return false }
        return try store.batches.hasOpenBatches(runID: run.id)
    }

    /// Refuses, before anything is stored or sent, a job its model cannot serve as asked: a search
    /// of the web the provider cannot run with the model (`searchRefusal`), a dollar budget on a
    /// model with no price (or no price per web search, for a job that searches: the budget could
    /// not stop it), or a `max_tokens` longer than the model can write.
    /// - Parameter tier: the tier `model` serves the job as (its own, or one lower on battery).
    func checkModel(_ model: String, tier: JobSpec.Tier, for spec: JobSpec) throws(OffpeakError) {
        if let refusal = Self.searchRefusal(spec, model: model, tier: tier, provider: provider.kind) {
            throw refusal
        }
        if let limit = spec.budget.maxDollars, prices.cost(of: model) == nil {
            throw OffpeakError(
                .configuration,
                "job \(spec.name) has a dollar budget (max_dollars \(Money.dollars(limit))) but its model "
                    + "\(model) has no price, so the budget could not stop it; "
                    + "\(PriceTable.howToPrice(model)), or remove max_dollars",
                location: spec.sourcePath)
        }
        if let limit = spec.budget.maxDollars, prices.cost(of: model)?.perSearch == nil, spec.searchesTheWeb {
            throw OffpeakError(
                .configuration,
                "job \(spec.name) searches the web and has a dollar budget (max_dollars \(Money.dollars(limit))) "
                    + "but its model \(model) has no price per search, so the budget could not stop its "
                    + "searches; \(PriceTable.howToPriceSearches(model)), or remove max_dollars",
                location: spec.sourcePath)
        }
        let limits = ModelLimits(model: model, price: prices.price(for: model))
        if let problem = limits.outputProblem(maxTokens: spec.maxTokens) {
            throw OffpeakError(.dataError, "max_tokens: \(problem)", location: spec.sourcePath)
        }
    }

    /// The refusal of a job that searches the web with a model its provider cannot search with
    /// (`ProviderCapabilities.webSearch`), naming what would work; nil when it can, or does not
    /// search. `offpeak estimate` refuses it the same way.
    static func searchRefusal(_ spec: JobSpec, model: String, tier: JobSpec.Tier, provider: ProviderKind)
        -> OffpeakError?
    {
        guard spec.searchesTheWeb else { return nil }
        let support = provider.capabilities.webSearch
        let why: String
        if let support {
            guard let reason = support.whyNot(model) else { return nil }
            why = reason
        } else {
            why = "provider \(provider.rawValue) cannot search the web"
        }
        let instead =
            support?.suggestedModel.map {
                "set one in offpeak.yaml (models: {\(provider.rawValue): {\(tier.rawValue): \($0)}}), or remove search:"
            } ?? "remove search:"
        return OffpeakError(
            .configuration, "job \(spec.name) searches the web, but \(why); \(instead)",
            location: spec.sourcePath)
    }

    /// What a run says when its model refuses sampling parameters (a search model): the job's
    /// `temperature` is left out of its calls, not honoured; nil when nothing is left out.
    static func samplingNote(_ spec: JobSpec, model: String, provider: ProviderKind) -> String? {
        guard let temperature = spec.temperature,
            provider.capabilities.webSearch?.takesNoSampling(model) == true
        else { return nil }
        return
            "job \(spec.name): \(model) takes no temperature, so its calls leave out temperature \(temperature)"
    }

    /// A job with no spec file (`offpeak summarize`) gathers its items across invocations: the
    /// items of its unfinished run are kept, with the new ones added (a file named again is read
    /// anew), so summarizing more files never drops those still waiting.
    /// - Returns: the spec to run, and the items dropped on the way (none yet: `prepareRun` says).
    func withUnfinishedItems(_ spec: JobSpec) throws(OffpeakError) -> (JobSpec, [String]) {
        guard spec.sourcePath == nil, let open = try store.runs.latestResumableRun(job: spec.name),
            let stored = open.storedSpec()
        else { return (spec, []) }
        let fresh = Dictionary(spec.items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let kept = Set(stored.items.map(\.id))
        var merged = spec
        merged.items = stored.items.map { fresh[$0.id] ?? $0 } + spec.items.filter { !kept.contains($0.id) }
        return (merged, [])
    }

    /// What a changed spec dropped from its unfinished run, in a line the user reads.
    static func droppedNotice(_ dropped: [String], spec: JobSpec) -> String? {
        guard !dropped.isEmpty else { return nil }
        let shown = dropped.prefix(5).joined(separator: ", ")
        let more = dropped.count > 5 ? " and \(dropped.count - 5) more" : ""
        return "\(spec.sourcePath ?? "the job \(spec.name)") changed while its run was unfinished: dropped "
            + "\(Plural.count(dropped.count, "unanswered item")) it no longer lists (\(shown)\(more))"
    }
}
