import Foundation
import Logging

/// Everything a command needs about its workspace, loaded once: where it is, its `offpeak.yaml`, the
/// prices, and (on demand) the store and the provider.
public struct WorkspaceContext: Sendable {
    public let workspace: Workspace
    let config: WorkspaceConfig
    let prices: PriceTable
    let environment: [String: String]
    let logger: Logger

    /// Reads `offpeak.yaml` and the price table; opens nothing else.
    /// - Parameter provider: `--provider`, overriding `offpeak.yaml`.
    /// - Parameter baseURL: `--base-url`, overriding `offpeak.yaml` and the environment.
    public init(
        workspace: Workspace, environment: [String: String], logger: Logger, provider: ProviderKind? = nil,
        baseURL: String? = nil
    ) throws(OffpeakError) {
        var config = try WorkspaceConfigParser.load(workspace: workspace.root)
        if let provider, provider != config.provider {
            config.provider = provider
            config.baseURL = nil
        }
        if let baseURL { config.baseURL = baseURL }
        var prices = PriceTable.bundled
        if let path = config.pricesPath {
            let file = workspace.url(for: path)
            prices = prices.merging(
                try PriceTable.load(file: file, shownAs: path, configuredAt: config.pricesLocation))
        }
        self.workspace = workspace
        self.config = config
        self.prices = prices
        self.environment = environment
        self.logger = logger
    }

    /// `offpeak costs`.
    public func costs(by grouping: CostReport.Grouping) throws(OffpeakError) -> CostReport {
        try reports().costs(by: grouping)
    }

    /// `offpeak status`.
    public func status(limit: Int) throws(OffpeakError) -> StatusReport {
        try reports().status(limit: limit, now: Date())
    }

    /// `offpeak status RUN`.
    public func run(id: String) throws(OffpeakError) -> RunReport {
        try reports().run(id: id, now: Date())
    }

    /// `offpeak hosts`.
    public func hosts() throws(OffpeakError) -> HostReport {
        try reports().hosts(now: Date())
    }

    /// The workspace's cache, capped as `offpeak.yaml` says, on a store opened read-only when this
    /// process cannot write it (`forReading`), else the writable store.
    public func openCache(forReading: Bool = true) throws(OffpeakError) -> ResponseCache {
        let store = try forReading ? openStoreForReading() : openStore()
        return ResponseCache(store: store, maxBytes: config.cacheMaxBytes, logger: logger)
    }

    /// `offpeak submit --job JOB`: the job's spec, checked to take submissions before the store is
    /// opened (a job that does not leaves the workspace untouched).
    public func submissionStream(job: String) throws(OffpeakError) -> SubmissionStream {
        let spec = try loadJob(job)
        try SubmissionStream.check(spec)
        return try SubmissionStream(
            queue: SubmissionQueue(store: try openStore(), spec: spec, config: config), spec: spec)
    }

    /// The configured provider; a missing key is a configuration error (78) naming the variable.
    func makeProvider(cancellation: CancellationFlag? = nil) throws(OffpeakError)
        -> any CompletionProvider
    {
        do {
            return try ProviderFactory.make(
                config: config, environment: environment, logger: logger, cancellation: cancellation)
        } catch {
            throw OffpeakError(.configuration, error.description)
        }
    }

    /// Reads conditions from `sysfsRoot` (else `$OFFPEAK_SYSFS_ROOT`, else `/sys`), NetworkManager
    /// (`$OFFPEAK_NMCLI`, else the `nmcli` on `PATH`, if any) and the workspace's metered and
    /// unmetered interfaces. A root named by the flag or the variable that is not a readable sysfs
    /// tree is a configuration error (`MachineConditions.error`).
    public func gate(sysfsRoot: String? = nil) -> ConditionGate {
        let root =
            sysfsRoot.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? MachineConditions.defaultRoot(environment: environment)
        return ConditionGate(
            sysfsRoot: root,
            rootNamedBy: sysfsRoot != nil ? "--sysfs-root" : MachineConditions.rootVariable(environment),
            metered: config.meteredInterfaces, unmetered: config.unmeteredInterfaces,
            networkManager: NetworkManagerSource(environment: environment))
    }

    /// What the model `tier` maps to can read and write, from the price table.
    public func limits(for tier: JobSpec.Tier) -> ModelLimits {
        let model = config.model(for: tier)
        return ModelLimits(model: model, price: prices.price(for: model))
    }

    /// Loads and validates one job spec, by name or path.
    public func loadJob(_ argument: String) throws(OffpeakError) -> JobSpec {
        let url = try JobSpecParser.resolve(argument, workspace: workspace.root)
        return try JobSpecParser.load(path: url, workspace: workspace.root)
    }

    /// Runs a validated job: checks the host's name and the key before the store is touched, so a
    /// misconfigured workspace is left as it was; a job whose spec differs from another host's is
    /// refused (`JobSpecAgreement`).
    public func run(_ spec: JobSpec, options: JobRunner.Options = JobRunner.Options()) throws(OffpeakError)
        -> RunOutcome
    {
        let host = try host()
        let callers = try makeCallers(for: spec, cancellation: options.stop?.calls)
        let store = try openStore()
        try JobSpecAgreement(store: store, host: host).require(spec, now: Date())
        if spec.acceptsSubmissions {
            let queue = SubmissionQueue(store: store, spec: spec, config: config)
            let taken = try SpoolFolder(workspace: workspace, job: spec.name).take(into: queue, spec: spec)
            for refusal in taken.refused { logger.warning("spool: \(refusal)") }
        }
        return try runner(callers, store: store, host: host).run(spec, options: options)
    }

    /// Runs a job on a store the caller holds open (a tick opens it once for all its jobs, and has
    /// taken every spool folder already).
    func run(_ spec: JobSpec, options: JobRunner.Options, store: Store) throws(OffpeakError) -> RunOutcome {
        let callers = try makeCallers(for: spec, cancellation: options.stop?.calls)
        return try runner(callers, store: store, host: try host()).run(spec, options: options)
    }

    /// Helps the process that holds `run` answer its requests (`JobRunner.help`), on a store the
    /// caller holds open.
    func help(_ spec: JobSpec, run: RunRecord, options: JobRunner.Options, store: Store) throws(OffpeakError)
        -> RunOutcome
    {
        let callers = try makeCallers(for: spec, cancellation: options.stop?.calls)
        return try runner(callers, store: store, host: try host()).help(spec, run: run, options: options)
    }

    /// The provider a job calls and its fallbacks, made before anything is opened: a key that is not
    /// set is a configuration error (78) naming its variable.
    private func makeCallers(for spec: JobSpec, cancellation: CancellationFlag?) throws(OffpeakError) -> (
        provider: any CompletionProvider, fallbacks: [JobSpec.Tier: [FallbackChain.Step]]
    ) {
        let provider = try makeProvider(cancellation: cancellation)
        return (provider, try makeFallbacks(for: spec, primary: provider, cancellation: cancellation))
    }

    private func runner(
        _ callers: (provider: any CompletionProvider, fallbacks: [JobSpec.Tier: [FallbackChain.Step]]),
        store: Store, host: String
    ) -> JobRunner {
        var runner = JobRunner(
            workspace: workspace, config: config, store: store, provider: callers.provider, prices: prices,
            logger: logger, host: host)
        runner.fallbacks = callers.fallbacks
        return runner
    }

    /// The fallbacks of the tiers `spec` may run at (its own, and the one below for a pass on
    /// battery), made: the job's own chain, else its tier's in offpeak.yaml. A step whose key is
    /// not set, or that is the tier's own provider and model again, is a configuration error (78)
    /// naming it.
    /// - Parameter environment: where keys are read; nil: the process's.
    func makeFallbacks(
        for spec: JobSpec, primary: any CompletionProvider, cancellation: CancellationFlag? = nil,
        environment: [String: String]? = nil
    ) throws(OffpeakError) -> [JobSpec.Tier: [FallbackChain.Step]] {
        var made: [JobSpec.Tier: [FallbackChain.Step]] = [:]
        for tier in Set([spec.tier, spec.tier.lower]) {
            let own = FallbackChain.Step(
                provider: primary, model: config.model(for: tier, provider: primary.kind)
            )
            .key
            var steps: [FallbackChain.Step] = []
            let chain = spec.fallbacks ?? config.fallbacks[tier] ?? []
            for (index, route) in chain.enumerated() {
                let place =
                    spec.fallbacks == nil
                    ? "\(WorkspaceConfigParser.fileName): fallbacks of \(tier.rawValue), [\(index)]"
                    : "job \(spec.name): fallbacks[\(index)]"
                let step: FallbackChain.Step
                do {
                    step = try ProviderFactory.make(
                        route, tier: tier, config: config, environment: environment ?? self.environment,
                        logger: logger,
                        cancellation: cancellation)
                } catch {
                    throw OffpeakError(.configuration, "\(place): \(error.description)")
                }
                guard step.key != own, !steps.contains(where: { $0.key == step.key }) else {
                    throw OffpeakError(
                        .configuration,
                        "\(place): \(step.provider.kind.rawValue) \(step.model) at \(step.provider.baseURL) is "
                            + "already in the chain; a fallback is another model or another provider")
                }
                steps.append(step)
            }
            made[tier] = steps
        }
        return made
    }
}

extension WorkspaceContext {
    /// `offpeak audit JOB`: how the job's batched answers compared with single ones, and what
    /// that decided.
    public func audit(_ spec: JobSpec) throws(OffpeakError) -> AuditReport {
        try AuditReport.make(store: try openStoreForReading(), spec: spec, now: Date())
    }
}
