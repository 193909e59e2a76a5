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
        let environment = placeholderKeys(for: spec)
        var provider = try planningProvider(environment)
        var model = config.model(for: spec.tier, provider: provider.kind)
        let store = try openStoreIfPresent()
        // With a fallback chain: the route a run would send to now, the first one not down.
        var chainNote: String?
        let chain = try makeFallbacks(for: spec, primary: provider, environment: environment)[spec.tier] ?? []
        if !chain.isEmpty {
            let outages = try store?.limits.outages(now: now ?? Date()) ?? [:]
            let primary = FallbackChain.Step(provider: provider, model: model)
            let routes = [primary] + chain
            if let down = outages[primary.key], let up = routes.first(where: { outages[$0.key] == nil }) {
                chainNote =
                    "\(primary.name) is down until \(Timestamp.text(down.until)) (\(down.reason)): estimated for "
                    + "\(up.name), which would answer"
                (provider, model) = (up.provider, up.model)
            } else {
                chainNote =
                    "fallbacks: if \(primary.name) cannot answer, "
                    + routes.dropFirst().map(\.name).joined(separator: ", then ")
                    + (outages.isEmpty ? "" : " (those down are skipped)")
            }
        }
        // What a run refuses before it sends anything, an estimate refuses too.
        if let refusal = JobRunner.searchRefusal(spec, model: model, tier: spec.tier, provider: provider.kind)
        {
            throw refusal
        }
        let limits = ModelLimits(model: model, price: prices.price(for: model))
        if let problem = limits.outputProblem(maxTokens: spec.maxTokens) {
            throw OffpeakError(.dataError, "max_tokens: \(problem)", location: spec.sourcePath)
        }
        let cache = store.map { ResponseCache(store: $0, maxBytes: config.cacheMaxBytes, logger: logger) }
        var estimate = try RunEstimator(
            spec: spec, model: model, provider: provider, config: config, prices: prices, store: store,
            cache: cache, cachePolicy: cachePolicy, now: now ?? Date()
        ).estimate()
        if let note = JobRunner.samplingNote(spec, model: model, provider: provider.kind) {
            estimate.notes.append(note)
        }
        if let chainNote { estimate.notes.append(chainNote) }
        return estimate
    }

    /// The configured provider, for planning only, made with `environment`'s placeholder keys.
    private func planningProvider(_ environment: [String: String]) throws(OffpeakError)
        -> any CompletionProvider
    {
        do {
            return try ProviderFactory.make(config: config, environment: environment, logger: logger)
        } catch {
            throw OffpeakError(.configuration, error.description)
        }
    }

    /// The environment with a placeholder for every key variable not set (each provider's, as it
    /// declares it, and each fallback's `key_env`): an estimate calls no provider, so a missing key
    /// is no reason to refuse one (the run still needs the real key).
    private func placeholderKeys(for spec: JobSpec) -> [String: String] {
        var environment = self.environment
        let routes = (spec.fallbacks ?? []) + config.fallbacks.values.flatMap { $0 }
        let variables =
            ProviderKind.allCases.compactMap(\.capabilities.environment.key)
            + routes.compactMap(\.keyVariable)
        for variable in variables where (environment[variable] ?? "").isEmpty {
            environment[variable] = "estimate-only"
        }
        return environment
    }
}
