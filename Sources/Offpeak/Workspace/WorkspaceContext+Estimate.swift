import Foundation

/// `offpeak estimate JOB` and `summarize --estimate`: the work a run would do, planned as it
/// would be and priced, with nothing sent and nothing written.
extension WorkspaceContext {
    /// Plans `spec` as `run` would now, reading the store (if there is one) through a read-only
    /// connection: a workspace without a store is estimated as new, and gets none.
    /// - Parameters:
    ///   - cachePolicy: `--no-cache` or `--refresh`, as the run would be given them.
    ///   - now: the moment taken as now (`estimate --now`); nil: the machine's clock.
    public func estimate(_ spec: JobSpec, cachePolicy: RequestRecord.CachePolicy = .normal, now: Date? = nil)
        throws(OffpeakError) -> RunEstimate
    {
        let provider = try planningProvider()
        let model = config.model(for: spec.tier, provider: provider.kind)
        // What a run refuses before it sends anything, an estimate refuses too.
        if let refusal = JobRunner.searchRefusal(spec, model: model, tier: spec.tier, provider: provider.kind)
        {
            throw refusal
        }
        let limits = ModelLimits(model: model, price: prices.price(for: model))
        if let problem = limits.outputProblem(maxTokens: spec.maxTokens) {
            throw OffpeakError(.dataError, "max_tokens: \(problem)", location: spec.sourcePath)
        }
        let store = try openStoreIfPresent()
        let cache = store.map { ResponseCache(store: $0, maxBytes: config.cacheMaxBytes, logger: logger) }
        var estimate = try RunEstimator(
            spec: spec, model: model, provider: provider, config: config, prices: prices, store: store,
            cache: cache, cachePolicy: cachePolicy, now: now ?? Date()
        ).estimate()
        if let note = JobRunner.samplingNote(spec, model: model, provider: provider.kind) {
            estimate.notes.append(note)
        }
        return estimate
    }

    /// The configured provider, for planning only: an estimate never calls it, so a missing key
    /// is no reason to refuse one (a placeholder stands in; the run still needs the real key).
    private func planningProvider() throws(OffpeakError) -> any CompletionProvider {
        var environment = self.environment
        // The variable this provider reads its key from, as it declares it: any provider's.
        if let variable = config.provider.capabilities.environment.key,
            config.provider.capabilities.environment.overridingKeys.allSatisfy({
                (environment[$0] ?? "").isEmpty
            }),
            (environment[variable] ?? "").isEmpty
        {
            environment[variable] = "estimate-only"
        }
        do {
            return try ProviderFactory.make(config: config, environment: environment, logger: logger)
        } catch {
            throw OffpeakError(.configuration, error.description)
        }
    }
}
